// actors.js names the actors of audit lines: an application by its name
// and type, read from GET /applications when the key may read them; a
// member or a session by its kind and id (the API gives no name for
// them to every key). A directory is read once (a bounded number of
// pages) and kept by the page that asked for it.
import { h } from './dom.js';
import { api, query } from './api.js';

// maxPages bounds what a directory reads: 5 pages of 100 applications.
const maxPages = 5;

// loadDirectory reads the tenant's applications, at most maxPages pages.
// It resolves to {apps: Map(id -> {id, name, type}), complete, error}:
// error is why the names could not be read (a key without
// application:read: its ids are shown as they are), never thrown.
export async function loadDirectory() {
  const apps = new Map();
  let start = '';
  try {
    for (let i = 0; i < maxPages; i++) {
      const page = await api('GET', `/applications${query({ size: 100, start })}`);
      for (const a of page.data || []) apps.set(a.id, { id: a.id, name: a.name, type: a.type });
      start = page.pagination && page.pagination.after;
      if (!start) return { apps, complete: true, error: null };
    }
    return { apps, complete: false, error: null };
  } catch (e) {
    return { apps, complete: false, error: e };
  }
}

// actorKinds labels the actor types of the log.
const actorKinds = { application: 'application', user: 'member', session: 'session', system: 'system' };

// actorCell shows a line's actor: an application's name and type (its id
// in the title), or the kind and raw id; text only.
export function actorCell(dir, line) {
  const kind = actorKinds[line.actor_type] || line.actor_type || '';
  const app = line.actor_type === 'application' && dir && dir.apps.get(line.actor_id);
  if (app) {
    return h('span', { class: 'actor', title: line.actor_id },
      h('span', { class: 'actor-name', text: app.name }), ' ', h('span', { class: 'muted', text: `(${app.type} application)` }));
  }
  if (!line.actor_id) return h('span', { class: 'actor', text: kind });
  return h('span', { class: 'actor' }, h('span', { class: 'muted', text: `${kind} ` }), h('code', { class: 'actor-id', text: line.actor_id }));
}
