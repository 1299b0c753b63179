// Applications: list, create with permissions or access rules (built in
// a form or written as JSON; the key shown once), a preview of what the
// grants being written allow on a sample token, regenerate a key, release
// one frozen by the circuit breaker on reveals, delete.
import { h, clear, pretty } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';
import { rulesEditor, splitList } from '../rules.js';

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
  // The preview beside the form (previewPanel); the list names its
  // applications to it.
  let preview = null;
  const keySlot = h('div', { id: 'key-slot' });
  const list = h('div', { id: 'app-list' });
  const listErr = formError();
  const pager = new Pager(
    (start) => api('GET', `/applications${query({ start, size: 20 })}`),
    (rows) => { preview.setApplications(rows); return clear(list).append(table([
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
    ], rows, 'No applications.')); },
    'apps');

  const name = h('input', { id: 'app-name', name: 'name', maxlength: 200, required: true });
  const type = h('select', { id: 'app-type', name: 'type' },
    ['private', 'public', 'management'].map((t) => h('option', { value: t, text: t })));
  const perms = h('fieldset', { id: 'app-permissions', class: 'perms' }, h('legend', { text: 'Permissions' }));
  const permErr = h('div', { class: 'field-error', 'data-error-for': 'permissions', role: 'alert' });
  const rulesText = h('textarea', { id: 'app-rules', name: 'rules', rows: 6, placeholder: ruleExample, spellcheck: 'false',
    'aria-label': 'Access rules as JSON' });
  const rules = rulesEditor(rulesText);
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
    // Rules grant token permissions; management applications hold none.
    rules.setPermissions(all.map((p) => p.type).filter((p) => p.startsWith('token:') && p !== 'token:access:read'));
    rules.el.hidden = type.value === 'management';
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
    rules.set([]);
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
    rules.set(a.rules);
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
    rules.el,
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
        rules: type.value === 'management' ? [] : rules.value(),
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
      rules.set([]);
      showOrigins();
      await loadPermissions();
      await pager.reload();
    });
  });

  preview = previewPanel(() => ({
    type: type.value,
    permissions: [...perms.querySelectorAll('input[name=permission]:checked')].map((c) => c.value),
    rules: type.value === 'management' ? [] : rules.value(),
  }));
  const listPanel = h('section', { id: 'app-list-panel' }, h('h2', { text: 'All applications' }), listErr, pager.el, list);
  root.append(h('h1', { text: 'Applications' }), keySlot, h('div', { class: 'beside' }, form, preview), listPanel);
  showOrigins();
  await guard(form, loadPermissions);
  await guard(listPanel, () => pager.reload());
}

// previewPanel asks the vault what the grants being written (grants()),
// or those of an application of the list, would allow on a sample token
// (POST /applications/preview-access), and shows its decision per token
// permission: the transform and the rule or direct permission that
// decided, or why it is refused. No token is read.
function previewPanel(grants) {
  const app = h('select', { id: 'preview-app', name: 'application_id' }, h('option', { value: '', text: 'the grants in the form' }));
  const type = h('select', { id: 'preview-type' }, ['token', 'card', 'bank'].map((t) => h('option', { value: t, text: t })));
  const containers = h('input', { id: 'preview-containers', name: 'token', placeholder: "the type's default container" });
  const purpose = h('input', { id: 'preview-purpose', name: 'purpose', placeholder: 'none' });
  const out = h('div', { id: 'preview-result', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', id: 'preview-run' }, 'Preview');
  const panel = h('form', { class: 'panel', id: 'preview', novalidate: true },
    h('h2', { text: 'What these grants would see' }),
    h('p', { class: 'muted', text: 'Decided on a sample token as a real call is: no token is read.' }),
    field('Grants of', app, 'application_id'),
    h('div', { class: 'row' }, field('Token type', type, 'token'), field('Containers', containers, 'token', 'space or comma separated'),
      field('Purpose of the call', purpose, 'purpose')),
    formError(), h('div', { class: 'actions' }, run), out);
  panel.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(panel, async () => {
      clear(out);
      const body = { ...(app.value ? { application_id: app.value } : grants()), purpose: purpose.value.trim() || undefined,
        token: { type: type.value, containers: splitList(containers.value) } };
      const p = await api('POST', '/applications/preview-access', body);
      out.append(h('p', { class: 'muted', text: `A ${p.token.type} in ${p.token.containers.join(', ')}${p.purpose ? `, for ${p.purpose}` : ''}:` }),
        table([
          { label: 'Permission', value: (d) => d.permission },
          { label: 'Decision', value: (d) => h('span', { class: d.allowed ? 'allowed' : 'refused', text: d.allowed ? `allowed: ${d.transform}` : 'refused' }) },
          { label: 'Why', value: (d) => d.containers.map((c) => h('div', { text: why(c, p.token.containers.length > 1) })) },
        ], p.decisions));
    });
  });
  // setApplications offers the applications of the list's page shown.
  panel.setApplications = (apps) => {
    const chosen = app.value;
    clear(app).append(h('option', { value: '', text: 'the grants in the form' }),
      ...apps.map((a) => h('option', { value: a.id, text: `${a.name} (${a.type})`, selected: a.id === chosen })));
  };
  return panel;
}

// why says what decided a permission in one container.
function why(c, named) {
  const where = named ? `${c.container}: ` : '';
  if (c.rule) return `${where}rule ${c.rule.priority} on ${c.rule.container || 'its conditions'} (${c.rule.transform})`;
  if (c.direct) return `${where}the permission is held directly (${c.transform})`;
  return `${where}${c.reason}`;
}
