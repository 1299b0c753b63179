// Reactor formulas and reactors: a code editor with line numbers, the
// configuration, and an invocation with arguments showing raw, tokens or
// the error.
import { h, clear, pretty, parseJSON } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId, codeEditor } from '../ui.js';

const codeExample = 'module.exports = async function (req) {\n  return { raw: { hello: req.args.name } };\n};\n';

export async function render(root) {
  // Formulas.
  const fList = h('div', { id: 'formula-list' });
  const formulaSelect = h('select', { id: 'reactor-formula', name: 'formula' });
  const fPanel = h('section', { id: 'formula-panel' });
  const fPager = new Pager((start) => api('GET', `/reactor-formulas${query({ start, size: 20 })}`), (rows) => {
    clear(fList).append(table([
      { label: 'Name', value: (f) => h('span', { class: 'formula-name', text: f.name }) },
      { label: 'Type', value: (f) => f.type },
      { label: 'Id', value: (f) => shortId(f.id) },
      { label: 'Configuration', value: (f) => (f.configuration || []).map((c) => `${c.name}: ${c.type}`).join(', ') },
      { label: 'Parameters', value: (f) => (f.request_parameters || []).map((p) => `${p.name}: ${p.type}${p.optional ? '?' : ''}`).join(', ') },
      { label: '', value: (f) => (f.type === 'private' ? confirmButton('Delete', 'Confirm delete', () => guard(fPanel, async () => {
        await api('DELETE', `/reactor-formulas/${encodeURIComponent(f.id)}`);
        await fPager.fetch();
      }), { 'aria-label': `Delete formula ${f.name}` }) : '') },
    ], rows, 'No formulas.'));
    clear(formulaSelect).append(h('option', { value: '', text: '(none: the reactor’s own code)' }),
      ...rows.map((f) => h('option', { value: f.id, text: f.name })));
  }, 'formulas');
  fPanel.append(h('h2', { text: 'Formulas' }), formError(), fPager.el, fList);

  const fName = h('input', { id: 'formula-name', name: 'name', maxlength: 200 });
  const fCode = codeEditor({ id: 'formula-code', name: 'code', rows: 10 });
  fCode.textarea.setValue(codeExample);
  const fConfig = h('textarea', { id: 'formula-configuration', name: 'configuration', rows: 2, spellcheck: 'false', placeholder: '[{"name": "tz", "type": "string"}]' });
  const fParams = h('textarea', { id: 'formula-parameters', name: 'request_parameters', rows: 2, spellcheck: 'false', placeholder: '[{"name": "name", "type": "string", "optional": true}]' });
  const fForm = h('form', { class: 'panel', id: 'formula-form', novalidate: true },
    h('h2', { text: 'New formula' }), field('Name', fName, 'name'),
    field('Code', fCode.textarea, 'code'),
    h('div', { class: 'row' }, field('Configuration declarations (JSON)', fConfig, 'configuration'),
      field('Request parameters (JSON)', fParams, 'request_parameters')),
    formError(), h('button', { type: 'submit', class: 'primary', id: 'formula-create' }, 'Create formula'));
  // field() put the textarea in its own wrapper: put the editor there.
  fCode.textarea.parentNode.insertBefore(fCode, fCode.textarea.nextSibling);
  fCode.append(fCode.textarea);
  fCode.prepend(fCode.gutter);
  fForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(fForm, async () => {
      await api('POST', '/reactor-formulas', {
        name: fName.value, code: fCode.textarea.value,
        configuration: parseJSON(fConfig.value, 'configuration', null),
        request_parameters: parseJSON(fParams.value, 'request_parameters', null),
      });
      fName.value = '';
      await fPager.reload();
    });
  });

  // Reactors.
  const rList = h('div', { id: 'reactor-list' });
  const invokeSelect = h('select', { id: 'invoke-reactor', name: 'reactor' });
  const rPanel = h('section', { id: 'reactor-panel' });
  const rPager = new Pager((start) => api('GET', `/reactors${query({ start, size: 20 })}`), (rows) => {
    clear(rList).append(table([
      { label: 'Name', value: (r) => h('span', { class: 'reactor-name', text: r.name }) },
      { label: 'Id', value: (r) => shortId(r.id) },
      { label: 'Formula', value: (r) => (r.formula ? h('span', { text: r.formula.name || r.formula.id }) : 'own code') },
      { label: 'Configuration', value: (r) => h('code', { text: JSON.stringify(r.configuration || {}) }) },
      { label: 'Code', value: (r) => (r.code ? h('pre', { class: 'reactor-code', text: r.code }) : '') },
      { label: '', value: (r) => h('div', { class: 'actions' },
        h('button', { type: 'button', 'data-action': 'edit', 'aria-label': `Edit reactor ${r.name}`, onclick: () => editReactor(r) }, 'Edit'),
        confirmButton('Delete', 'Confirm delete', () => guard(rPanel, async () => {
          await api('DELETE', `/reactors/${encodeURIComponent(r.id)}`);
          await rPager.fetch();
        }), { 'aria-label': `Delete reactor ${r.name}` })) },
    ], rows, 'No reactors.'));
    clear(invokeSelect).append(...rows.map((r) => h('option', { value: r.id, text: r.name })));
  }, 'reactors');
  rPanel.append(h('h2', { text: 'Reactors' }), formError(), rPager.el, rList);

  const rName = h('input', { id: 'reactor-name', name: 'name', maxlength: 200 });
  const rCode = codeEditor({ id: 'reactor-code', name: 'code', rows: 8 });
  const rConfig = h('textarea', { id: 'reactor-configuration', name: 'configuration', rows: 2, spellcheck: 'false', placeholder: '{"tz": "UTC"}' });
  const rApp = h('input', { id: 'reactor-application', name: 'application', spellcheck: 'false' });
  // Editing (PUT): name, configuration, application, and the code of a
  // reactor without a formula; its formula stays.
  let editing = null;
  const rTitle = h('h2', { id: 'reactor-form-title', text: 'New reactor' });
  const rSubmit = h('button', { type: 'submit', class: 'primary', id: 'reactor-create' }, 'Create reactor');
  const rCancel = h('button', { type: 'button', id: 'reactor-cancel', hidden: true }, 'Cancel');
  function stopEditing() {
    editing = null;
    rTitle.textContent = 'New reactor';
    rSubmit.textContent = 'Create reactor';
    rCancel.hidden = true;
    formulaSelect.disabled = false;
    rName.value = '';
    rConfig.value = '';
    rApp.value = '';
    rCode.textarea.setValue('');
  }
  function editReactor(r) {
    editing = r;
    rTitle.textContent = `Edit ${r.name}`;
    rSubmit.textContent = 'Save changes';
    rCancel.hidden = false;
    rName.value = r.name;
    formulaSelect.value = r.formula ? r.formula.id : '';
    formulaSelect.disabled = true;
    rConfig.value = JSON.stringify(r.configuration || {});
    rApp.value = r.application ? r.application.id : '';
    rCode.textarea.setValue(r.code || '');
    rForm.scrollIntoView({ block: 'start' });
    rName.focus();
  }
  rCancel.addEventListener('click', stopEditing);
  const rForm = h('form', { class: 'panel', id: 'reactor-form', novalidate: true },
    rTitle,
    h('div', { class: 'row' }, field('Name', rName, 'name'), field('Formula', formulaSelect, 'formula'),
      field('Application id (optional, public or private)', rApp, 'application')),
    field('Own code (when no formula)', rCode.textarea, 'code'),
    field('Configuration (JSON object)', rConfig, 'configuration'),
    formError(), h('div', { class: 'actions' }, rSubmit, rCancel));
  rCode.textarea.parentNode.insertBefore(rCode, rCode.textarea.nextSibling);
  rCode.append(rCode.textarea);
  rCode.prepend(rCode.gutter);
  rForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(rForm, async () => {
      const body = { name: rName.value, configuration: parseJSON(rConfig.value, 'configuration', {}) };
      if (rApp.value.trim()) body.application = { id: rApp.value.trim() };
      if (editing) {
        if (!editing.formula) body.code = rCode.textarea.value;
        await api('PUT', `/reactors/${encodeURIComponent(editing.id)}`, body);
        stopEditing();
        await rPager.fetch();
        return;
      }
      if (formulaSelect.value) body.formula = { id: formulaSelect.value };
      else body.code = rCode.textarea.value;
      await api('POST', '/reactors', body);
      rName.value = '';
      await rPager.reload();
    });
  });

  // Invoke.
  const args = h('textarea', { id: 'invoke-args', name: 'args', rows: 3, spellcheck: 'false', placeholder: '{"name": "{{<token id>}}"}' });
  const byId = h('input', { id: 'invoke-reactor-id', name: 'reactor_id', spellcheck: 'false' });
  const out = h('div', { id: 'invoke-result' });
  const iForm = h('form', { class: 'panel', id: 'invoke-form', novalidate: true },
    h('h2', { text: 'Invoke a reactor' }),
    h('div', { class: 'row' }, field('Reactor', invokeSelect, 'reactor'),
      field('Or its id (a key that may invoke but not list reactors)', byId, 'reactor_id')),
    field('Arguments (JSON object; {{token id}} is detokenized)', args, 'args'),
    formError(), h('button', { type: 'submit', class: 'primary', id: 'invoke' }, 'Invoke'), out);
  iForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clear(out);
    guard(iForm, async () => {
      const id = byId.value.trim() || invokeSelect.value;
      if (!id) throw new Error('Choose a reactor, or give its id.');
      const res = await api('POST', `/reactors/${encodeURIComponent(id)}/react`, { args: parseJSON(args.value, 'args', null) });
      out.append(h('h3', { text: 'raw' }), h('pre', { id: 'invoke-raw', text: pretty(res && res.raw) || '(none)' }),
        h('h3', { text: 'tokens' }), h('pre', { id: 'invoke-tokens', text: pretty(res && res.tokens) || '(none)' }));
    });
  });

  root.append(h('h1', { text: 'Reactors' }), fPanel, fForm, rPanel, rForm, iForm);
  await guard(fPanel, () => fPager.reload());
  await guard(rPanel, () => rPager.reload());
}
