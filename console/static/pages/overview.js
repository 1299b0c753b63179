// Overview: the tenant's figures, as far as the signed-in key may read
// them. A key with tenant:read (the management key) reads them all at
// once from GET /tenants/self/statistics, which counts tokens without
// reading one; another key reads the totals of the lists it may list.
// A figure the key may read neither way is left out, and one quiet line
// says which permission would show it. The audit log keeps no count, so
// its recent lines are shown instead.
import { h } from '../dom.js';
import { api, query } from '../api.js';
import { table, timeCell, operationCell } from '../ui.js';

// figures: [label, list path (its data-figure), the permission that lists
// it, the statistics' field (none: not in them)].
const figures = [
  ['Applications', '/applications', 'application:read', 'applications'],
  ['Tokens', '/tokens', 'token:read', (s) => s.tokens.total],
  ['Reactors', '/reactors', 'reactor:read', 'reactors'],
  ['Reactor formulas', '/reactor-formulas', 'reactor:read', null],
  ['Proxies', '/proxies', 'proxy:read', 'proxies'],
  ['Members', '/tenants/self/members', 'tenant:member:read', 'members'],
  ['Invitations', '/tenants/self/invitations', 'tenant:invitation:read', 'invitations'],
  ['Webhooks', '/webhooks', 'webhook:read', (s) => s.webhooks.total],
];

// lowerBound: lists whose total may be a lower bound.
const lowerBound = new Set(['/tokens']);

export async function render(root) {
  const title = h('h1', { text: 'Overview' });
  const cards = h('div', { class: 'cards', id: 'figures' });
  const details = h('div', { id: 'figure-details' });
  const hidden = h('p', { class: 'muted', id: 'figures-hidden', hidden: true });
  const recent = h('section', { id: 'recent' }, h('h2', { text: 'Recent activity' }));
  root.append(title, cards, hidden, details, recent);
  api('GET', '/tenants/self').then((t) => { title.textContent = `Overview of ${t.name}`; }, () => {});

  let stats = null;
  try {
    stats = await api('GET', '/tenants/self/statistics');
  } catch (e) {
    if (e.status !== 403) cards.append(h('p', { class: 'form-error', text: e.detail }));
  }
  const missing = [];
  await Promise.all(figures.map(async ([label, path, perm, field]) => {
    const n = h('div', { class: 'n', text: '…' });
    const card = h('div', { class: 'card', 'data-figure': path }, n, h('div', { text: label }));
    cards.append(card);
    if (stats && field) {
      n.textContent = String(typeof field === 'function' ? field(stats) : stats[field]);
      if (path === '/webhooks') webhookHealth(card, stats.webhooks);
      return;
    }
    try {
      const page = await api('GET', `${path}${query({ size: 1 })}`);
      const pg = page.pagination || {};
      // A token count may be a lower bound (see Pager): then "at least".
      n.textContent = `${pg.after && lowerBound.has(path) ? '≥ ' : ''}${pg.total_items ?? page.data.length}`;
    } catch (e) {
      if (e.status !== 403) {
        n.textContent = '–';
        card.append(h('div', { class: 'muted', text: e.detail }));
        return;
      }
      card.remove();
      missing.push(`${label} (${stats || field === null ? perm : `${perm} or tenant:read`})`);
    }
  }));
  if (missing.length) {
    hidden.hidden = false;
    hidden.textContent = `Not shown to this key: ${missing.sort().join(', ')}.`;
  }
  if (stats) {
    details.append(tokenBreakdown(stats.tokens), checkpoint(stats.audit_checkpoint));
  }
  try {
    const page = await api('GET', `/logs${query({ size: 10 })}`);
    recent.append(table([
      { label: 'When', value: (l) => timeCell(l.created_at) },
      { label: 'Entity', value: (l) => `${l.entity_type} ${l.entity_id}` },
      { label: 'Operation', value: operationCell },
      { label: 'Message', value: (l) => l.message || '' },
    ], page.data || [], 'No activity yet.'));
  } catch (e) {
    recent.append(h('p', { class: 'muted', text: e.status === 403 ? 'Recent activity needs log:read.' : e.detail }));
  }
}

// webhookHealth adds to the webhooks card how many fail now and how many
// are off.
function webhookHealth(card, w) {
  if (w.failing) card.append(h('div', { class: 'warn', 'data-failing': w.failing, text: `${w.failing} failing` }));
  if (w.disabled) card.append(h('div', { class: 'muted', text: `${w.disabled} disabled` }));
}

// tokenBreakdown is the tokens by type and by container, each a row with
// a bar of its share of every token (drawn with CSS, no chart library).
function tokenBreakdown(t) {
  // Set through the CSSOM: the console's CSP refuses style attributes.
  const bar = (n) => {
    const el = h('span', { class: 'bar', 'aria-hidden': 'true' });
    el.style.setProperty('--share', `${t.total ? (100 * n) / t.total : 0}%`);
    return el;
  };
  const rows = (m) => Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const section = h('section', { id: 'tokens-breakdown' }, h('h2', { text: 'Tokens' }));
  section.append(h('div', { class: 'row breakdown' },
    h('div', { id: 'tokens-by-type' }, table([
      { label: 'Type', value: ([k]) => k },
      { label: 'Tokens', value: ([, n]) => String(n) },
      { label: 'Share', value: ([, n]) => bar(n) },
    ], rows(t.by_type))),
    h('div', { id: 'tokens-by-container' }, table([
      { label: 'Container', value: ([k]) => h('code', { text: k }) },
      { label: 'Tokens', value: ([, n]) => String(n) },
      { label: 'Share', value: ([, n]) => bar(n) },
    ], rows(t.by_container), 'No token yet.'))));
  section.append(h('p', { class: 'muted', text: 'A token in several containers counts in each.' +
    (t.unplaced ? ` ${t.unplaced} tokens of rarer sets of containers are counted by type only.` : '') }));
  return section;
}

// checkpoint says up to where the audit chain was last signed.
function checkpoint(c) {
  const p = h('p', { id: 'audit-checkpoint' });
  if (!c) {
    p.append('The audit chain has no signed checkpoint yet.');
  } else {
    p.append(`Audit chain last signed at line ${c.seq}, `, h('time', { datetime: c.created_at, text: new Date(c.created_at).toLocaleString() }),
      ` (key ${c.key_id}).`);
  }
  return h('section', { id: 'audit' }, h('h2', { text: 'Audit chain' }), p);
}
