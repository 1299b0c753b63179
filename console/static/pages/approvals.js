// Approvals: the changes the tenant's approval policy holds, each with
// what it does (before and after), approved or rejected here by the
// policy's approvers. A requester cannot approve its own change: the API
// refuses it, and the refusal is shown.
import { h, clear, pretty } from '../dom.js';
import { api, query } from '../api.js';
import { formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';

const operations = {
  'application.create_management': 'Create a management application',
  'application.widen_grants': 'Widen an application\'s grants',
  'application.regenerate_key': 'Regenerate an application\'s key',
  'token.detokenize_bulk': 'Detokenize many tokens in one call',
  'tenant.delete': 'Delete the tenant with all of its data',
  'token.export': 'Export the tenant\'s tokens (encrypted to a recipient)',
  'approval_policy.update': 'Change the approval policy',
};

// diff shows a change's before and after side by side (JSON as text,
// never parsed as HTML).
function diff(c) {
  return h('div', { class: 'diff' },
    h('div', {}, h('div', { class: 'muted', text: 'Before' }), h('pre', { class: 'change-before', text: c.before === null ? '(nothing)' : pretty(c.before) })),
    h('div', {}, h('div', { class: 'muted', text: 'After' }), h('pre', { class: 'change-after', text: pretty(c.after) })));
}

export async function render(root) {
  const list = h('div', { id: 'approval-list' });
  const panel = h('section', { id: 'approval-panel' });
  const status = h('select', { id: 'approval-status', name: 'status', 'aria-label': 'Status' },
    [['pending', 'Pending'], ['', 'All'], ['applied', 'Applied'], ['rejected', 'Rejected'], ['expired', 'Expired'], ['failed', 'Failed']]
      .map(([v, t]) => h('option', { value: v, text: t })));
  const policy = h('p', { class: 'muted', id: 'approval-policy' });

  // Oldest first, by cursor; the total is a lower bound (changes are
  // not counted).
  const pager = new Pager((start) => api('GET', `/approvals${query({ status: status.value, start, size: 10 })}`), (rows) => clear(list).append(table([
    { label: 'Change', value: (c) => h('div', {},
      h('strong', { class: 'change-operation', text: operations[c.operation] || c.operation }),
      h('div', {}, 'Id ', shortId(c.id)),
      c.target ? h('div', {}, 'Target ', shortId(c.target)) : '') },
    { label: 'What it does', value: (c) => diff(c) },
    { label: 'Requested', value: (c) => h('div', {},
      h('div', {}, 'By ', shortId(c.requested_by)),
      h('div', { class: 'muted', text: `at ${c.requested_at}` }),
      h('div', { class: 'muted', text: `expires ${c.expires_at}` })) },
    { label: 'Status', value: (c) => h('div', {},
      h('span', { class: 'change-status', text: c.status }),
      h('div', { class: 'muted change-count', text: `${(c.approvals || []).length} of ${c.required} approvals` }),
      c.reason ? h('div', { class: 'change-reason', text: c.reason }) : '') },
    { label: 'Decide', value: (c) => (c.status !== 'pending' ? '' : h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', 'data-action': 'approve', 'aria-label': `Approve change ${c.id}`,
        onclick: () => guard(panel, async () => { await api('POST', `/approvals/${encodeURIComponent(c.id)}/approve`); await pager.fetch(); }) }, 'Approve'),
      confirmButton('Reject', 'Confirm reject', () => guard(panel, async () => {
        await api('POST', `/approvals/${encodeURIComponent(c.id)}/reject`, {});
        await pager.fetch();
      }), { 'data-action': 'reject', 'aria-label': `Reject change ${c.id}` }))) },
  ], rows, 'No changes.')), 'approvals', false);
  status.addEventListener('change', () => guard(panel, () => pager.reload()));

  panel.append(h('h1', { text: 'Approvals' }), policy,
    h('label', {}, 'Show ', status), formError(), pager.el, list);
  root.append(panel);
  api('GET', '/tenants/self/approval-policy').then((p) => {
    policy.textContent = p.required
      ? `Changes need ${p.required} of ${p.approvers.length} approvers: ${p.operations.map((o) => operations[o] || o).join(', ') || 'only changes of the policy'}.`
      : 'This tenant has no approval policy: no operation waits for approval.';
  }, () => {});
  await guard(panel, () => pager.reload());
}
