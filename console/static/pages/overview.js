// Overview: the tenant's figures the API tells (list totals; the audit
// log keeps no count, so it shows its recent lines instead). A figure the key may not read says so.
import { h } from '../dom.js';
import { api, query } from '../api.js';
import { table } from '../ui.js';

const figures = [
  ['Applications', '/applications'],
  ['Tokens', '/tokens'],
  ['Reactors', '/reactors'],
  ['Reactor formulas', '/reactor-formulas'],
  ['Proxies', '/proxies'],
  ['Members', '/tenants/self/members'],
  ['Invitations', '/tenants/self/invitations'],
  ['Webhooks', '/webhooks'],
];

// lowerBound: lists whose total may be a lower bound.
const lowerBound = new Set(['/tokens']);

export async function render(root) {
  const title = h('h1', { text: 'Overview' });
  const cards = h('div', { class: 'cards', id: 'figures' });
  const recent = h('section', { id: 'recent' }, h('h2', { text: 'Recent activity' }));
  root.append(title, cards, recent);
  api('GET', '/tenants/self').then((t) => { title.textContent = `Overview of ${t.name}`; }, () => {});
  await Promise.all(figures.map(async ([label, path]) => {
    const n = h('div', { class: 'n', text: '…' });
    const card = h('div', { class: 'card', 'data-figure': path }, n, h('div', { text: label }));
    cards.append(card);
    try {
      const page = await api('GET', `${path}${query({ size: 1 })}`);
      const pg = page.pagination || {};
      // A token count may be a lower bound (see Pager): then "at least".
      n.textContent = `${pg.after && lowerBound.has(path) ? '≥ ' : ''}${pg.total_items ?? page.data.length}`;
    } catch (e) {
      n.textContent = '–';
      card.append(h('div', { class: 'muted', text: e.status === 403 ? 'not readable with this key' : e.detail }));
    }
  }));
  try {
    const page = await api('GET', `/logs${query({ size: 10 })}`);
    recent.append(table([
      { label: 'When', value: (l) => l.created_at },
      { label: 'Entity', value: (l) => `${l.entity_type} ${l.entity_id}` },
      { label: 'Operation', value: (l) => l.operation },
      { label: 'Message', value: (l) => l.message || '' },
    ], page.data || [], 'No activity yet.'));
  } catch (e) {
    recent.append(h('p', { class: 'muted', text: e.status === 403 ? 'This key may not read the audit log.' : e.detail }));
  }
}
