// token_access.js: who accessed a token (GET /tokens/{id}/access, which
// needs token:access:read), in a panel of the page that asks: the
// newest 20 accesses, with the actor, channel, transform and purpose.
import { h, clear } from '../dom.js';
import { api, query } from '../api.js';
import { table, timeCell } from '../ui.js';
import { actorCell } from '../actors.js';

// accessPanel fills panel with token id's access report, its actors
// named from dir (actors.js loadDirectory); a refusal (the key lacks
// token:access:read) is shown in the panel.
export async function accessPanel(panel, id, dir) {
  panel.hidden = false;
  const close = h('button', { type: 'button', id: 'token-access-close', onclick: () => { clear(panel); panel.hidden = true; } }, 'Close');
  const body = h('div', { id: 'token-access-list', text: 'Loading…' });
  clear(panel).append(h('h2', {}, 'Who accessed token ', h('code', { text: id })), body, close);
  panel.scrollIntoView({ block: 'nearest' });
  try {
    const page = await api('GET', `/tokens/${encodeURIComponent(id)}/access${query({ size: 20 })}`);
    clear(body).append(table([
      { label: 'When', value: (a) => timeCell(a.created_at) },
      { label: 'Actor', value: (a) => actorCell(dir, a) },
      { label: 'Channel', value: (a) => a.channel || '' },
      { label: 'Transform', value: (a) => a.transform || '' },
      { label: 'Purpose', value: (a) => a.purpose || '' },
    ], page.data || [], 'No access to this token\'s data is logged.'),
    page.pagination && page.pagination.after ? h('p', { class: 'muted', text: 'The newest 20 are shown; tokenvault token-access lists them all.' }) : null);
  } catch (e) {
    clear(body).append(h('div', { class: 'form-error', role: 'alert', text: e.detail || e.message }));
  }
}
