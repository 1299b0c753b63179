// Tokens: search with the query syntax or list by container, view one
// (as the key's rules show it: masked, revealed or redacted), create one,
// delete one.
import { h, clear, pretty, parsePairs, parseJSON } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';

function dataCell(t) {
  if (!('data' in t)) return h('span', { class: 'muted', text: '(not shown to this key)' });
  return h('code', { class: 'token-data', text: typeof t.data === 'string' ? t.data : JSON.stringify(t.data) });
}

function metadataCell(t) {
  const md = t.metadata || {};
  return Object.keys(md).length ? h('code', { class: 'token-metadata', text: JSON.stringify(md) }) : '';
}

export async function render(root) {
  const view = h('div', { id: 'token-view-slot' });

  async function show(id) {
    const t = await api('GET', `/tokens/${encodeURIComponent(id)}`);
    const del = confirmButton('Delete token', 'Confirm delete', () => guard(viewForm, async () => {
      await api('DELETE', `/tokens/${encodeURIComponent(t.id)}`);
      clear(view).append(h('p', { class: 'status', id: 'token-deleted', text: `Token ${t.id} deleted.` }));
      if (pager.page) await guard(results, () => pager.fetch());
    }), { id: 'token-delete' });
    clear(view).append(h('section', { class: 'panel', id: 'token-view' },
      h('h2', {}, 'Token ', h('code', { text: t.id })),
      h('p', {}, 'Data as this key sees it: ', dataCell(t)),
      h('pre', { id: 'token-json', text: pretty(t) }), del));
  }

  // Find: a query (POST /tokens/search) or a container (GET /tokens).
  const q = h('input', { id: 'token-query', name: 'query', type: 'search', placeholder: 'metadata.customer:42 type:card', spellcheck: 'false' });
  const container = h('input', { id: 'token-container', name: 'container', placeholder: '/pci/' });
  const list = h('div', { id: 'token-results' });
  const pager = new Pager((start) => {
    if (q.value.trim() !== '') return api('POST', '/tokens/search', { query: q.value.trim(), size: 20, ...(start ? { start } : {}) });
    return api('GET', `/tokens${query({ container: container.value.trim(), size: 20, start })}`);
  }, (rows) => clear(list).append(table([
    { label: 'Id', value: (t) => shortId(t.id) },
    { label: 'Type', value: (t) => t.type },
    { label: 'Containers', value: (t) => (t.containers || []).join(', ') },
    { label: 'Data', value: dataCell },
    { label: 'Metadata', value: metadataCell },
    { label: '', value: (t) => h('button', { type: 'button', 'data-action': 'view', 'aria-label': `View token ${t.id}`,
      onclick: () => guard(viewForm, () => show(t.id)) }, 'View') },
  ], rows, 'No tokens match.')), 'tokens', false);
  const searchForm = h('form', { class: 'panel', id: 'token-search-form', novalidate: true },
    h('h2', { text: 'Find tokens' }),
    h('div', { class: 'row' },
      field('Search query', q, 'query', 'Terms combined with AND: data:…, metadata.<key>:…, type:card, container:/pci, fingerprint:…, id:…'),
      field('Or list a container', container, 'container')),
    formError(),
    h('button', { type: 'submit', class: 'primary', id: 'token-search' }, 'Search'));
  const results = h('section', { id: 'token-results-panel' }, pager.el, list);
  searchForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(searchForm, () => pager.reload());
  });

  // View by id.
  const idInput = h('input', { id: 'token-id', name: 'id', spellcheck: 'false' });
  const viewForm = h('form', { class: 'panel', id: 'token-view-form', novalidate: true },
    h('h2', { text: 'View a token' }), field('Token id', idInput, 'id'), formError(),
    h('button', { type: 'submit', id: 'token-show' }, 'View'), view);
  viewForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(viewForm, () => show(idInput.value.trim()));
  });

  // Create.
  const type = h('select', { id: 'new-token-type', name: 'type' }, ['token', 'card'].map((t) => h('option', { value: t, text: t })));
  const data = h('textarea', { id: 'new-token-data', name: 'data', rows: 2, spellcheck: 'false' });
  const number = h('input', { id: 'card-number', name: 'number', inputmode: 'numeric', autocomplete: 'off' });
  const month = h('input', { id: 'card-month', name: 'expiration_month', type: 'number', min: 1, max: 12 });
  const year = h('input', { id: 'card-year', name: 'expiration_year', type: 'number', min: 2000, max: 2200 });
  const cvc = h('input', { id: 'card-cvc', name: 'cvc', inputmode: 'numeric', autocomplete: 'off' });
  const plainFields = h('div', { id: 'plain-fields' }, field('Data (text, or JSON)', data, 'data'));
  const cardFields = h('div', { id: 'card-fields', class: 'row', hidden: true },
    field('Card number', number, 'data'), field('Expiration month', month, 'expiration_month'),
    field('Expiration year', year, 'expiration_year'), field('CVC (optional)', cvc, 'cvc'));
  type.addEventListener('change', () => {
    cardFields.hidden = type.value !== 'card';
    plainFields.hidden = type.value === 'card';
  });
  const containers = h('input', { id: 'new-token-containers', name: 'containers', placeholder: '/pci/, /eu/' });
  const metadata = h('textarea', { id: 'new-token-metadata', name: 'metadata', rows: 3, placeholder: 'customer=42', spellcheck: 'false' });
  const indexes = h('textarea', { id: 'new-token-indexes', name: 'search_indexes', rows: 2, placeholder: '{{ data }}', spellcheck: 'false' });
  const created = h('div', { id: 'token-created-slot' });
  const createForm = h('form', { class: 'panel', id: 'token-create-form', novalidate: true },
    h('h2', { text: 'Create a token' }),
    field('Type', type, 'type'), plainFields, cardFields,
    h('div', { class: 'row' }, field('Containers (comma separated, optional)', containers, 'containers'),
      field('Metadata (key=value, one a line)', metadata, 'metadata'),
      field('Search indexes (one expression a line)', indexes, 'search_indexes')),
    formError(),
    h('button', { type: 'submit', class: 'primary', id: 'token-create' }, 'Create token'), created);
  createForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(createForm, async () => {
      const body = { type: type.value };
      if (type.value === 'card') {
        body.data = { number: number.value.replace(/[\s-]/g, ''), expiration_month: Number(month.value), expiration_year: Number(year.value) };
        if (cvc.value) body.data.cvc = cvc.value;
      } else {
        const text = data.value;
        body.data = /^\s*[[{"]/.test(text) ? parseJSON(text, 'data') : text;
      }
      const cs = containers.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (cs.length) body.containers = cs;
      let md;
      try {
        md = parsePairs(metadata.value);
      } catch (e) {
        throw Object.assign(new Error(`metadata: ${e.message}`), { field: 'metadata' });
      }
      if (Object.keys(md).length) body.metadata = md;
      const ix = indexes.value.split('\n').map((s) => s.trim()).filter(Boolean);
      if (ix.length) body.search_indexes = ix;
      const t = await api('POST', '/tokens', body);
      clear(created).append(h('p', { class: 'status' }, 'Created token ', h('code', { id: 'created-token-id', text: t.id }), '.'),
        h('pre', { id: 'created-token-json', text: pretty(t) }));
      number.value = '';
      cvc.value = '';
      data.value = '';
    });
  });

  root.append(h('h1', { text: 'Tokens' }), searchForm, results, viewForm, createForm);
}
