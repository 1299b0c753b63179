// The audit log: filters by entity type, entity id and dates, paged by
// cursor; the page shown can be exported as JSON lines.
import { h, clear, isoDate, jsonLines, download } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager } from '../ui.js';

export async function render(root) {
  const entityType = h('select', { id: 'log-entity-type', name: 'entity_type' }, h('option', { value: '', text: 'Any' }));
  const entityId = h('input', { id: 'log-entity-id', name: 'entity_id', spellcheck: 'false' });
  const start = h('input', { id: 'log-start', name: 'start_date', type: 'datetime-local' });
  const end = h('input', { id: 'log-end', name: 'end_date', type: 'datetime-local' });
  const size = h('select', { id: 'log-size', name: 'size' }, [5, 10, 20, 50, 100].map((n) => h('option', { value: n, text: String(n), selected: n === 20 })));
  const list = h('div', { id: 'log-list' });
  const filters = () => ({
    entity_type: entityType.value,
    entity_id: entityId.value.trim(),
    start_date: isoDate(start.value),
    end_date: isoDate(end.value),
    size: size.value,
  });
  const pager = new Pager((s) => api('GET', `/logs${query({ ...filters(), start: s })}`), (rows) => clear(list).append(table([
    { label: 'When', value: (l) => h('time', { datetime: l.created_at, text: l.created_at }) },
    { label: 'Entity', value: (l) => `${l.entity_type} ${l.entity_id}` },
    { label: 'Operation', value: (l) => l.operation },
    { label: 'Actor', value: (l) => [l.actor_type, l.actor_id].filter(Boolean).join(' ') },
    { label: 'Message', value: (l) => h('span', { class: 'log-message', text: l.message || '' }) },
  ], rows, 'No log lines match.')), 'logs', false);
  const exportBtn = h('button', { type: 'button', id: 'log-export' }, 'Export this page (JSON lines)');
  exportBtn.addEventListener('click', () => {
    const rows = (pager.page && pager.page.data) || [];
    download(`tokenvault-audit-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`, jsonLines(rows), 'application/x-ndjson');
  });
  const form = h('form', { class: 'panel', id: 'log-form', novalidate: true },
    h('div', { class: 'row' }, field('Entity type', entityType, 'entity_type'), field('Entity id', entityId, 'entity_id'),
      field('From (local time)', start, 'start_date'), field('Until (local time)', end, 'end_date'), field('Lines a page', size, 'size')),
    formError(),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'log-filter' }, 'Show'), exportBtn));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, () => pager.reload());
  });
  root.append(h('h1', { text: 'Audit log' }), form, h('section', { id: 'log-panel' }, pager.el, list));
  await guard(form, async () => {
    const types = await api('GET', '/logs/entity-types');
    entityType.append(...types.map((t) => h('option', { value: t.value, text: t.display_name || t.value })));
  });
  await guard(form, () => pager.reload());
}
