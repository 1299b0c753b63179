// Applications: list, create with permissions or access rules (the key
// shown once), regenerate a key, release one frozen by the circuit
// breaker on reveals, delete.
import { h, clear, parseJSON, pretty } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';

const ruleExample = '[{"priority": 1, "container": "/", "transform": "mask", "permissions": ["token:read", "token:search"]}]';

// keyBox shows a new key once, with a button that copies it.
function keyBox(app, what) {
  const code = h('code', { id: 'new-key', text: app.key });
  const status = h('span', { class: 'status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy key');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(app.key);
      status.textContent = 'Copied.';
    } catch {
      getSelection().selectAllChildren(code);
      status.textContent = 'Select and copy it by hand (the clipboard was refused).';
    }
  });
  const done = h('button', { type: 'button', id: 'dismiss-key' }, 'I have stored it');
  const box = h('div', { class: 'secret', role: 'status' },
    h('p', {}, `${what} for `, h('strong', { text: app.name }), '. It is shown this once: store it now.'),
    h('p', {}, code), h('div', { class: 'actions' }, copy, done, status));
  done.addEventListener('click', () => box.remove());
  return box;
}

// held shows an operation the tenant's approval policy holds (a 202):
// it waits as a pending change (#/approvals); a new key it will have is
// shown once, like any new key. It reports whether out was one.
function held(out, keySlot) {
  if (!out || out.status !== 'pending' || !out.operation) return false;
  clear(keySlot).append(h('p', { class: 'pending-note', id: 'pending-note', role: 'status' },
    'Waiting for approval: ', h('a', { href: '#/approvals', text: `change ${out.id}` }), '. It takes effect once approved.'));
  if (out.key) keySlot.append(keyBox({ key: out.key, name: (out.after && out.after.name) || out.target }, 'The key it will have once approved'));
  return true;
}

export async function render(root) {
  const keySlot = h('div', { id: 'key-slot' });
  const list = h('div', { id: 'app-list' });
  const listErr = formError();
  const pager = new Pager(
    (start) => api('GET', `/applications${query({ start, size: 20 })}`),
    (rows) => clear(list).append(table([
      { label: 'Name', value: (a) => h('span', {}, h('span', { class: 'app-name', text: a.name }),
        a.frozen_at ? h('span', { class: 'badge frozen', 'data-frozen': a.id, title: `Frozen at ${a.frozen_at} (${a.frozen_reason === 'decoy' ? 'a decoy token was read' : 'the reveal budget was crossed'}): every call of its keys is refused until released.`, text: 'frozen' }) : '') },
      { label: 'Type', value: (a) => a.type },
      { label: 'Id', value: (a) => shortId(a.id) },
      { label: 'Grants', value: (a) => (a.permissions && a.permissions.length ? a.permissions.join(', ')
        : h('details', {}, h('summary', { text: `${(a.rules || []).length} access rule(s)` }), h('pre', { text: pretty(a.rules) }))) },
      { label: 'Allowed origins', value: (a) => h('span', { class: 'app-origins', text: (a.allowed_origins || []).join(' ') }) },
      { label: 'Actions', value: (a) => h('div', { class: 'actions' },
        h('button', { type: 'button', 'data-action': 'edit', 'aria-label': `Edit ${a.name}`, onclick: () => guard(form, () => edit(a)) }, 'Edit'),
        confirmButton('Regenerate key', 'Confirm: old key stops', () => guard(listPanel, async () => {
          const out = await api('POST', `/applications/${encodeURIComponent(a.id)}/regenerate`);
          if (!held(out, keySlot)) clear(keySlot).append(keyBox(out, 'A new key'));
        }), { 'data-action': 'regenerate', 'aria-label': `Regenerate the key of ${a.name}` }),
        a.frozen_at ? confirmButton('Release', 'Confirm: keys work again', () => guard(listPanel, async () => {
          await api('POST', `/applications/${encodeURIComponent(a.id)}/unfreeze`);
          await pager.fetch();
        }), { 'data-action': 'unfreeze', 'aria-label': `Release ${a.name} from its freeze` }) : '',
        confirmButton('Delete', 'Confirm delete', () => guard(listPanel, async () => {
          await api('DELETE', `/applications/${encodeURIComponent(a.id)}`);
          await pager.fetch();
        }), { 'data-action': 'delete', 'aria-label': `Delete ${a.name}` })) },
    ], rows, 'No applications.')),
    'apps');

  const name = h('input', { id: 'app-name', name: 'name', maxlength: 200, required: true });
  const type = h('select', { id: 'app-type', name: 'type' },
    ['private', 'public', 'management'].map((t) => h('option', { value: t, text: t })));
  const perms = h('fieldset', { id: 'app-permissions', class: 'perms' }, h('legend', { text: 'Permissions' }));
  const permErr = h('div', { class: 'field-error', 'data-error-for': 'permissions', role: 'alert' });
  const rules = h('textarea', { id: 'app-rules', name: 'rules', rows: 4, placeholder: ruleExample, spellcheck: 'false' });
  const expires = h('input', { id: 'app-expires', name: 'expires_at', type: 'datetime-local' });
  // A public application's origins allowed to embed its hosted card
  // fields (docs/elements.md): shown for public applications only.
  const origins = h('textarea', { id: 'app-origins', name: 'allowed_origins', rows: 2, placeholder: 'https://shop.example', spellcheck: 'false' });
  const originsField = field('Allowed origins (one a line: the pages that may embed its card fields)', origins, 'allowed_origins',
    'scheme://host[:port], no path');
  const showOrigins = () => { originsField.hidden = type.value !== 'public'; };
  const originLines = () => origins.value.split('\n').map((l) => l.trim()).filter(Boolean);

  async function loadPermissions() {
    const all = await api('GET', `/permissions${query({ application_type: type.value })}`);
    clear(perms).append(h('legend', { text: `Permissions a ${type.value} application may hold` }),
      h('div', { class: 'row' }, all.map((p) => {
        const cb = h('input', { type: 'checkbox', name: 'permission', value: p.type, id: `perm-${p.type.replaceAll(':', '-')}` });
        return h('label', { class: 'check' }, cb, ` ${p.type}`);
      })));
  }
  type.addEventListener('change', () => { showOrigins(); guard(form, loadPermissions); });

  // Editing: the form edits an application (PUT: name and grants; its
  // type and expiry stay) until saved or cancelled.
  let editing = null;
  const heading = h('h2', { id: 'app-form-title', text: 'New application' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'app-create' }, 'Create application');
  const cancel = h('button', { type: 'button', id: 'app-cancel', hidden: true }, 'Cancel');
  function stopEditing() {
    editing = null;
    heading.textContent = 'New application';
    submit.textContent = 'Create application';
    cancel.hidden = true;
    type.disabled = false;
    expires.disabled = false;
    form.reset();
    showOrigins();
  }
  async function edit(a) {
    editing = a;
    heading.textContent = `Edit ${a.name}`;
    submit.textContent = 'Save changes';
    cancel.hidden = false;
    name.value = a.name;
    type.value = a.type;
    type.disabled = true;
    expires.value = '';
    expires.disabled = true;
    await loadPermissions();
    for (const cb of perms.querySelectorAll('input[name=permission]')) cb.checked = (a.permissions || []).includes(cb.value);
    rules.value = a.rules && a.rules.length ? JSON.stringify(a.rules, null, 1) : '';
    origins.value = (a.allowed_origins || []).join('\n');
    showOrigins();
    form.scrollIntoView({ block: 'start' });
    name.focus();
  }
  cancel.addEventListener('click', () => guard(form, async () => { stopEditing(); await loadPermissions(); }));

  const form = h('form', { class: 'panel', id: 'app-form', novalidate: true },
    heading,
    h('div', { class: 'row' }, field('Name', name, 'name'), field('Type', type, 'type'), field('Expires at (optional)', expires, 'expires_at')),
    perms, permErr,
    field('Or access rules (JSON array)', rules, 'rules', `For example ${ruleExample}`),
    originsField,
    formError(),
    h('div', { class: 'actions' }, submit, cancel));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, async () => {
      const body = {
        name: name.value,
        type: type.value,
        permissions: [...perms.querySelectorAll('input[name=permission]:checked')].map((c) => c.value),
        rules: parseJSON(rules.value, 'rules', []),
      };
      if (type.value === 'public') body.allowed_origins = originLines();
      if (editing) {
        delete body.type;
        held(await api('PUT', `/applications/${encodeURIComponent(editing.id)}`, body), keySlot);
        stopEditing();
        await loadPermissions();
        await pager.fetch();
        return;
      }
      if (expires.value) body.expires_at = new Date(expires.value).toISOString();
      const app = await api('POST', '/applications', body);
      if (!held(app, keySlot)) clear(keySlot).append(keyBox(app, 'The key'));
      form.reset();
      showOrigins();
      await loadPermissions();
      await pager.reload();
    });
  });

  const listPanel = h('section', { id: 'app-list-panel' }, h('h2', { text: 'All applications' }), listErr, pager.el, list);
  root.append(h('h1', { text: 'Applications' }), keySlot, form, listPanel);
  showOrigins();
  await guard(form, loadPermissions);
  await guard(listPanel, () => pager.reload());
}
