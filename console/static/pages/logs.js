// The audit log: lines with their actors named (application names, or
// the kind and id of a member or session), local times (UTC in the
// title), denied requests marked; filtered by actor, operation, outcome,
// entity and time, the filters kept in the URL's hash
// (#/logs?outcome=denied) so a filtered view can be linked; paged by
// cursor; the page shown can be exported as JSON lines. A token's line
// opens who accessed it (GET /tokens/{id}/access) when the key may read
// that.
import { h, clear, isoDate, localInput, hashParams, jsonLines, download } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, showError, table, timeCell, operationCell, Pager } from '../ui.js';
import { loadDirectory, actorCell } from '../actors.js';
import { accessPanel } from './token_access.js';

// operations are those of the log (GET /logs?operation=).
const operations = ['create', 'read', 'update', 'delete', 'invoke', 'denied'];
// filterNames are the hash's parameters, GET /logs's filters and size.
const filterNames = ['actor_id', 'operation', 'outcome', 'entity_type', 'entity_id', 'start_date', 'end_date', 'size'];
const otherActor = '-other-';

// mayReadAccess tells whether the signed-in key holds token:access:read:
// true or false when its application says, null when it cannot be read.
async function mayReadAccess() {
  try {
    const app = await api('GET', '/applications/key');
    return (app.permissions || []).includes('token:access:read');
  } catch {
    return null;
  }
}

export async function render(root) {
  const options = (list, any) => [h('option', { value: '', text: any }), ...list.map(([v, t]) => h('option', { value: v, text: t }))];
  const actor = h('select', { id: 'log-actor', name: 'actor' }, h('option', { value: '', text: 'Anyone' }));
  const actorId = h('input', { id: 'log-actor-id', name: 'actor_id', spellcheck: 'false', placeholder: 'an application, member or session id' });
  const operation = h('select', { id: 'log-operation', name: 'operation' }, options(operations.map((o) => [o, o]), 'Any'));
  const outcome = h('select', { id: 'log-outcome', name: 'outcome' }, options([['allowed', 'allowed'], ['denied', 'denied']], 'All'));
  const entityType = h('select', { id: 'log-entity-type', name: 'entity_type' }, h('option', { value: '', text: 'Any' }));
  const entityId = h('input', { id: 'log-entity-id', name: 'entity_id', spellcheck: 'false' });
  const start = h('input', { id: 'log-start', name: 'start_date', type: 'datetime-local', step: '1' });
  const end = h('input', { id: 'log-end', name: 'end_date', type: 'datetime-local', step: '1' });
  const size = h('select', { id: 'log-size', name: 'size' }, [5, 10, 20, 50, 100].map((n) => h('option', { value: n, text: String(n), selected: n === 20 })));
  const list = h('div', { id: 'log-list' });
  const access = h('section', { id: 'token-access', class: 'panel', hidden: true });
  const namesNote = h('p', { class: 'muted', id: 'log-names-note', hidden: true });
  // Both name actor_id: the API's error on it shows under the one shown.
  const actorField = field('Actor', actor, 'actor_id');
  const actorIdField = field('Actor id', actorId, 'actor_id');
  actorIdField.hidden = true;

  // free: the actor is the id typed (chosen so, or no application names
  // could be read to choose from).
  const free = () => actor.value === otherActor || actorField.hidden;
  const showActorId = () => { actorIdField.hidden = !free(); };
  actor.addEventListener('change', showActorId);
  const filters = () => ({
    actor_id: free() ? actorId.value.trim() : actor.value,
    operation: operation.value,
    outcome: outcome.value,
    entity_type: entityType.value,
    entity_id: entityId.value.trim(),
    start_date: isoDate(start.value),
    end_date: isoDate(end.value),
    size: size.value,
  });
  // setFilters shows the filters of the hash in the form. It returns the
  // field errors of those the form cannot hold (a link edited by hand),
  // which are left out rather than guessed.
  const setFilters = (p, dir) => {
    const errors = {};
    const id = p.actor_id || '';
    actor.value = dir.apps.has(id) ? id : '';
    if (id && !dir.apps.has(id)) actor.value = otherActor;
    actorId.value = free() ? id : '';
    showActorId();
    const choose = (el, name) => {
      const v = p[name] || '';
      el.value = v;
      if (el.value !== v) {
        el.value = '';
        errors[name] = [`the link's ${name} ${JSON.stringify(v)} is not one of the list; left out`];
      }
    };
    choose(operation, 'operation');
    choose(outcome, 'outcome');
    choose(entityType, 'entity_type');
    choose(size, 'size');
    if (!p.size) size.value = '20';
    entityId.value = p.entity_id || '';
    for (const [el, name] of [[start, 'start_date'], [end, 'end_date']]) {
      el.value = localInput(p[name]);
      if (p[name] && !el.value) errors[name] = [`the link's ${name} ${JSON.stringify(p[name])} is not a time; left out`];
    }
    return errors;
  };

  let dir = { apps: new Map(), complete: false, error: null };
  let canAccess = null;
  const accessCell = (l) => (l.entity_type === 'token' && canAccess !== false
    ? h('button', { type: 'button', class: 'link', 'data-action': 'access', 'data-token': l.entity_id,
      onclick: () => accessPanel(access, l.entity_id, dir) }, 'Who accessed it')
    : '');
  const pager = new Pager((s) => api('GET', `/logs${query({ ...filters(), start: s })}`), (rows) => clear(list).append(table([
    { label: 'When', value: (l) => timeCell(l.created_at) },
    { label: 'Entity', value: (l) => `${l.entity_type} ${l.entity_id}` },
    { label: 'Operation', value: operationCell },
    { label: 'Actor', value: (l) => actorCell(dir, l) },
    { label: 'Message', value: (l) => h('span', { class: 'log-message', text: l.message || '' }) },
    { label: 'Access', value: accessCell },
  ], rows, 'No log lines match.')), 'logs', false);
  const exportBtn = h('button', { type: 'button', id: 'log-export' }, 'Export this page (JSON lines)');
  exportBtn.addEventListener('click', () => {
    const rows = (pager.page && pager.page.data) || [];
    download(`tokenvault-audit-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`, jsonLines(rows), 'application/x-ndjson');
  });
  const form = h('form', { class: 'panel', id: 'log-form', novalidate: true },
    h('div', { class: 'row' }, actorField, actorIdField, field('Operation', operation, 'operation'),
      field('Outcome', outcome, 'outcome'), field('Entity type', entityType, 'entity_type'), field('Entity id', entityId, 'entity_id')),
    h('div', { class: 'row' }, field('From (local time)', start, 'start_date'), field('Until (local time)', end, 'end_date'),
      field('Lines a page', size, 'size')),
    namesNote,
    formError(),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'log-filter' }, 'Show'), exportBtn));
  // Show: the filters go into the hash (a new history entry when they
  // changed, so Back returns to the view before), and the first page is
  // read again.
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, () => {
      const f = filters();
      const hash = `#/logs${query(Object.fromEntries(filterNames.map((n) => [n, n === 'size' && f.size === '20' ? '' : f[n]])))}`;
      if (location.hash !== hash) history.pushState(null, '', hash);
      return pager.reload();
    });
  });
  root.append(h('h1', { text: 'Audit log' }), form, access, h('section', { id: 'log-panel' }, pager.el, list));

  [dir, canAccess] = await Promise.all([loadDirectory(), mayReadAccess()]);
  const apps = [...dir.apps.values()].sort((a, b) => a.name.localeCompare(b.name));
  actor.append(...apps.map((a) => h('option', { value: a.id, text: `${a.name} (${a.type})` })), h('option', { value: otherActor, text: 'Another id…' }));
  if (dir.apps.size === 0) actorField.hidden = true;
  if (dir.error) {
    namesNote.hidden = false;
    namesNote.textContent = `Actors are shown by id: this key cannot read the applications (${dir.error.detail || dir.error.message}).`;
  } else if (!dir.complete) {
    namesNote.hidden = false;
    namesNote.textContent = `Names are shown for the first ${dir.apps.size} applications; the others by id.`;
  }
  await guard(form, async () => {
    const types = await api('GET', '/logs/entity-types');
    entityType.append(...types.map((t) => h('option', { value: t.value, text: t.display_name || t.value })));
  });
  const errors = setFilters(hashParams(location.hash), dir);
  await guard(form, async () => {
    await pager.reload();
    if (Object.keys(errors).length) showError(form, { detail: 'Some filters of this link were left out.', errors });
  });
}
