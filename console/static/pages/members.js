// Members and invitations of the tenant.
import { h, clear } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';

function userName(u) {
  if (!u) return '';
  return [u.first_name, u.last_name].filter(Boolean).join(' ') || u.email || u.id;
}

export async function render(root) {
  const mList = h('div', { id: 'member-list' });
  const mPanel = h('section', { id: 'member-panel' });
  const mPager = new Pager((start) => api('GET', `/tenants/self/members${query({ start, size: 20 })}`), (rows) => clear(mList).append(table([
    { label: 'Member', value: (m) => h('span', { class: 'member-name', text: userName(m.user) }) },
    { label: 'E-mail', value: (m) => (m.user && m.user.email) || '' },
    { label: 'Role', value: (m) => m.role },
    { label: 'Id', value: (m) => shortId(m.id) },
    { label: '', value: (m) => (m.role === 'OWNER' ? '' : confirmButton('Remove', 'Confirm remove', () => guard(mPanel, async () => {
      await api('DELETE', `/tenants/self/members/${encodeURIComponent(m.id)}`);
      await mPager.fetch();
    }), { 'aria-label': `Remove ${userName(m.user)}` })) },
  ], rows, 'No members.')), 'members');
  mPanel.append(h('h1', { text: 'Members' }), formError(), mPager.el, mList);

  const iList = h('div', { id: 'invitation-list' });
  const iPanel = h('section', { id: 'invitation-panel' });
  const iPager = new Pager((start) => api('GET', `/tenants/self/invitations${query({ start, size: 20 })}`), (rows) => clear(iList).append(table([
    { label: 'E-mail', value: (i) => h('span', { class: 'invitation-email', text: i.email }) },
    { label: 'Status', value: (i) => i.status },
    { label: 'Expires', value: (i) => i.expires_at || '' },
    { label: '', value: (i) => h('div', { class: 'actions' },
      h('button', { type: 'button', 'aria-label': `Resend the invitation to ${i.email}`,
        onclick: () => guard(iPanel, async () => { await api('POST', `/tenants/self/invitations/${encodeURIComponent(i.id)}/resend`); await iPager.fetch(); }) }, 'Resend'),
      confirmButton('Delete', 'Confirm delete', () => guard(iPanel, async () => {
        await api('DELETE', `/tenants/self/invitations/${encodeURIComponent(i.id)}`);
        await iPager.fetch();
      }), { 'aria-label': `Delete the invitation to ${i.email}` })) },
  ], rows, 'No invitations.')), 'invitations');
  iPanel.append(h('h2', { text: 'Invitations' }), formError(), iPager.el, iList);

  const email = h('input', { id: 'invite-email', name: 'email', type: 'email', autocomplete: 'off' });
  const form = h('form', { class: 'panel', id: 'invite-form', novalidate: true },
    h('h2', { text: 'Invite someone' }), field('E-mail address', email, 'email'), formError(),
    h('button', { type: 'submit', class: 'primary', id: 'invite' }, 'Send invitation'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, async () => {
      await api('POST', '/tenants/self/invitations', { email: email.value.trim() });
      email.value = '';
      await iPager.reload();
    });
  });

  root.append(mPanel, iPanel, form);
  await guard(mPanel, () => mPager.reload());
  await guard(iPanel, () => iPager.reload());
}
