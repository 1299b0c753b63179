// Proxies: destination, transforms, configuration, and a test call
// through /proxy with the proxy's key (and the signed-in key when the
// proxy requires one).
import { h, clear, pretty, parseJSON } from '../dom.js';
import { api, query, problemOf } from '../api.js';
import { getKey } from '../session.js';
import { field, formError, guard, table, Pager, confirmButton, shortId, codeEditor, showError } from '../ui.js';

function editorField(label, name, id) {
  const ed = codeEditor({ id, name, rows: 5 });
  const f = field(label, ed.textarea, name);
  ed.textarea.replaceWith(ed);
  ed.append(ed.textarea);
  return { f, ed };
}

export async function render(root) {
  const list = h('div', { id: 'proxy-list' });
  const callSelect = h('select', { id: 'call-proxy', name: 'proxy' });
  const panel = h('section', { id: 'proxy-panel' });
  let proxies = [];
  const pager = new Pager((start) => api('GET', `/proxies${query({ start, size: 20 })}`), (rows) => {
    proxies = rows;
    clear(list).append(table([
      { label: 'Name', value: (p) => h('span', { class: 'proxy-name', text: p.name }) },
      { label: 'Id', value: (p) => shortId(p.id) },
      { label: 'Destination', value: (p) => h('code', { text: p.destination_url }) },
      { label: 'Transforms', value: (p) => [p.request_transform ? 'request' : '', p.response_transform ? 'response' : ''].filter(Boolean).join(', ') || 'none' },
      { label: 'Key required', value: (p) => (p.require_auth ? 'yes' : 'no') },
      { label: '', value: (p) => h('div', { class: 'actions' },
        h('button', { type: 'button', 'data-action': 'edit', 'aria-label': `Edit proxy ${p.name}`, onclick: () => editProxy(p) }, 'Edit'),
        confirmButton('Delete', 'Confirm delete', () => guard(panel, async () => {
          await api('DELETE', `/proxies/${encodeURIComponent(p.id)}`);
          await pager.fetch();
        }), { 'aria-label': `Delete proxy ${p.name}` })) },
    ], rows, 'No proxies.'));
    clear(callSelect).append(...rows.map((p) => h('option', { value: p.id, text: p.name })));
  }, 'proxies');
  panel.append(h('h1', { text: 'Proxies' }), formError(), pager.el, list);

  const name = h('input', { id: 'proxy-name', name: 'name', maxlength: 200 });
  const dest = h('input', { id: 'proxy-destination', name: 'destination_url', type: 'url', placeholder: 'https://api.example.com/charge', spellcheck: 'false' });
  const req = editorField('Request transform code (optional)', 'request_transform', 'proxy-request-transform');
  const res = editorField('Response transform code (optional)', 'response_transform', 'proxy-response-transform');
  const config = h('textarea', { id: 'proxy-configuration', name: 'configuration', rows: 2, spellcheck: 'false', placeholder: '{"merchant": "m-1"}' });
  const app = h('input', { id: 'proxy-application', name: 'application_id', spellcheck: 'false' });
  const requireAuth = h('input', { id: 'proxy-require-auth', name: 'require_auth', type: 'checkbox', checked: true });
  // Editing (PUT): every field; the proxy keeps its id and key.
  let editing = null;
  const title = h('h2', { id: 'proxy-form-title', text: 'New proxy' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'proxy-create' }, 'Create proxy');
  const cancel = h('button', { type: 'button', id: 'proxy-cancel', hidden: true }, 'Cancel');
  function fill(p) {
    name.value = p ? p.name : '';
    dest.value = p ? p.destination_url : '';
    req.ed.textarea.setValue(p && p.request_transform ? p.request_transform.code : '');
    res.ed.textarea.setValue(p && p.response_transform ? p.response_transform.code : '');
    config.value = p && p.configuration ? JSON.stringify(p.configuration) : '';
    app.value = p && p.application_id ? p.application_id : '';
    requireAuth.checked = p ? p.require_auth : true;
  }
  function stopEditing() {
    editing = null;
    title.textContent = 'New proxy';
    submit.textContent = 'Create proxy';
    cancel.hidden = true;
    fill(null);
  }
  function editProxy(p) {
    editing = p;
    title.textContent = `Edit ${p.name}`;
    submit.textContent = 'Save changes';
    cancel.hidden = false;
    fill(p);
    form.scrollIntoView({ block: 'start' });
    name.focus();
  }
  cancel.addEventListener('click', stopEditing);
  const form = h('form', { class: 'panel', id: 'proxy-form', novalidate: true },
    title,
    h('div', { class: 'row' }, field('Name', name, 'name'), field('Destination URL', dest, 'destination_url'),
      field('Application id (optional)', app, 'application_id')),
    req.f, res.f, field('Configuration (JSON object, optional)', config, 'configuration'),
    h('div', { class: 'field' }, h('label', { for: 'proxy-require-auth' }, requireAuth, ' Callers must also send an API key (token:use)'),
      h('div', { class: 'field-error', 'data-error-for': 'require_auth' })),
    formError(), h('div', { class: 'actions' }, submit, cancel));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, async () => {
      const body = { name: name.value, destination_url: dest.value, require_auth: requireAuth.checked };
      if (req.ed.textarea.value.trim()) body.request_transform = { code: req.ed.textarea.value };
      if (res.ed.textarea.value.trim()) body.response_transform = { code: res.ed.textarea.value };
      const c = parseJSON(config.value, 'configuration', null);
      if (c) body.configuration = c;
      if (app.value.trim()) body.application_id = app.value.trim();
      if (editing) {
        await api('PUT', `/proxies/${encodeURIComponent(editing.id)}`, body);
        stopEditing();
        await pager.fetch();
        return;
      }
      await api('POST', '/proxies', body);
      name.value = '';
      await pager.reload();
    });
  });

  // A test call.
  const method = h('select', { id: 'call-method', name: 'method' }, ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'].map((m) => h('option', { value: m, text: m })));
  const path = h('input', { id: 'call-path', name: 'path', placeholder: '/charges', spellcheck: 'false' });
  const body = h('textarea', { id: 'call-body', name: 'body', rows: 3, spellcheck: 'false', placeholder: '{"card": "{{<token id>}}"}' });
  const out = h('div', { id: 'call-result' });
  const call = h('form', { class: 'panel', id: 'call-form', novalidate: true },
    h('h2', { text: 'Test call' }),
    h('div', { class: 'row' }, field('Proxy', callSelect, 'proxy'), field('Method', method, 'method'), field('Path after /proxy', path, 'path')),
    field('JSON body ({{token id}} is detokenized)', body, 'body'),
    formError(), h('button', { type: 'submit', class: 'primary', id: 'call' }, 'Send'), out);
  call.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clear(out);
    guard(call, async () => {
      const p = proxies.find((x) => x.id === callSelect.value);
      if (!p) throw new Error('Create a proxy first.');
      const headers = { 'SVC-PROXY-KEY': p.key };
      if (p.require_auth) headers['SVC-API-KEY'] = getKey();
      let payload;
      if (method.value !== 'GET' && body.value.trim()) {
        parseJSON(body.value, 'body');
        headers['Content-Type'] = 'application/json';
        payload = body.value;
      }
      const suffix = path.value.trim() ? `/${path.value.trim().replace(/^\/+/, '')}` : '';
      const r = await fetch(`/proxy${suffix}`, { method: method.value, headers, body: payload, credentials: 'omit', cache: 'no-store' });
      const text = await r.text();
      let shown = text;
      try {
        const parsed = JSON.parse(text);
        shown = pretty(parsed);
        if (parsed && parsed.proxy_error) showError(call, { ...problemOf(parsed), detail: `proxy_error: ${problemOf(parsed).detail || problemOf(parsed).title}` });
      } catch {
        // Not JSON: shown as it came.
      }
      out.append(h('p', {}, 'Status ', h('strong', { id: 'call-status', text: String(r.status) })), h('pre', { id: 'call-response', text: shown }));
    });
  });

  root.append(panel, form, call);
  await guard(panel, () => pager.reload());
}
