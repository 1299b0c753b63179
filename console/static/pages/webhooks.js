// Webhooks: list, create (events chosen from GET /webhooks/event-types;
// the signing secret shown once), edit, enable or disable, rotate the
// secret (shown once), send a test event, delete; and one webhook's
// deliveries, paged by cursor, with redelivery.
import { h, clear } from '../dom.js';
import { api, query } from '../api.js';
import { field, formError, guard, table, Pager, confirmButton, shortId } from '../ui.js';

// highVolume are the event types "*" leaves out: a webhook gets them only
// when it names them (docs/webhooks.md; the API answers names only, so
// the console keeps this list, checked against the vault's catalogue by
// TestWebhookPageKnowsHighVolumeEvents).
export const highVolume = {
  'token.read': 'every read of a token',
  'proxy.invoked': 'every request a proxy forwards',
  'reactor.invoked': 'every invocation of a reactor',
};

// eventsLabel is how a webhook's events read in the list: "*" says what
// it means.
export function eventsLabel(events) {
  return (events || []).map((e) => (e === '*' ? '* (every event but the high-volume ones)' : e)).join(', ');
}

// webhookBody is the PUT body that keeps w as it is but for changes.
export function webhookBody(w, changes) {
  const body = { name: w.name, url: w.url, events: w.events, status: w.status };
  if (w.notify_email) body.notify_email = w.notify_email;
  return { ...body, ...changes };
}

// secretBox shows a webhook's signing secret once, with a button that
// copies it.
function secretBox(w, what) {
  const code = h('code', { id: 'new-secret', text: w.secret });
  const status = h('span', { class: 'status', id: 'copy-secret-status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: 'copy-secret' }, 'Copy secret');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(w.secret);
      status.textContent = 'Copied.';
    } catch {
      getSelection().selectAllChildren(code);
      status.textContent = 'Select and copy it by hand (the clipboard was refused).';
    }
  });
  const done = h('button', { type: 'button', id: 'dismiss-secret' }, 'I have stored it');
  const until = w.previous_secret_until
    ? h('p', { class: 'muted', text: `The previous secret signs too until ${w.previous_secret_until}: deploy this one to the receiver before then.` })
    : null;
  const box = h('div', { class: 'secret', role: 'status' },
    h('p', {}, `${what} of `, h('strong', { text: w.name }), '. It is shown this once: store it now (receivers verify the webhook-signature header with it).'),
    h('p', {}, code), until, h('div', { class: 'actions' }, copy, done, status));
  done.addEventListener('click', () => box.remove());
  return box;
}

// narrow keeps a field of a .row to its content's width.
function narrow(f) {
  f.classList.add('narrow');
  return f;
}

// deliveriesPanel lists one webhook's deliveries, newest first, by cursor;
// while one shown is pending it fetches the page again every 2 seconds.
function deliveriesPanel(w) {
  const list = h('div', { id: 'delivery-list' });
  const panel = h('section', { id: 'delivery-panel', class: 'panel', 'data-webhook': w.id });
  let timer = null;
  const base = `/webhooks/${encodeURIComponent(w.id)}/deliveries`;
  const size = h('select', { id: 'delivery-size', name: 'size' }, [5, 10, 20, 50].map((n) => h('option', { value: n, text: String(n), selected: n === 10 })));
  const pager = new Pager((start) => api('GET', `${base}${query({ start, size: size.value })}`), (rows) => {
    clear(list).append(table([
      { label: 'Created', value: (d) => h('time', { datetime: d.created_at, text: d.created_at }) },
      { label: 'Event type', value: (d) => h('span', { class: 'delivery-event', text: d.event_type }) },
      { label: 'Status', value: (d) => h('span', { class: 'delivery-status', text: d.status }) },
      { label: 'Attempts', value: (d) => String(d.attempts) },
      { label: 'Response status', value: (d) => h('span', { class: 'delivery-response-status', text: d.response_status ?? 'none' }) },
      { label: 'Duration', value: (d) => `${d.duration_ms} ms` },
      { label: 'Next attempt', value: (d) => d.next_attempt_at || '' },
      { label: 'Error', value: (d) => h('span', { class: 'delivery-error', text: d.error || '' }) },
      { label: 'Response (first bytes)', value: (d) => (d.response ? h('pre', { class: 'delivery-response', text: d.response }) : '') },
      { label: '', value: (d) => (d.status === 'pending' ? '' : h('button', { type: 'button', 'data-action': 'redeliver',
        'aria-label': `Redeliver ${d.event_type} ${d.id}`, onclick: () => guard(panel, async () => {
          await api('POST', `${base}/${encodeURIComponent(d.id)}/redeliver`);
          await pager.fetch();
        }) }, 'Redeliver')) },
    ], rows, 'No deliveries yet.'));
    clearTimeout(timer);
    if (rows.some((d) => d.status === 'pending')) {
      timer = setTimeout(() => { if (panel.isConnected) guard(panel, () => pager.fetch()); }, 2000);
    }
  }, 'deliveries', false);
  const refresh = h('button', { type: 'button', id: 'deliveries-refresh', onclick: () => guard(panel, () => pager.reload()) }, 'Refresh');
  const close = h('button', { type: 'button', id: 'deliveries-close', onclick: () => { clearTimeout(timer); panel.remove(); } }, 'Close');
  panel.append(h('h2', {}, 'Deliveries of ', h('span', { id: 'delivery-webhook-name', text: w.name })),
    h('p', { class: 'muted', text: 'Newest first; finished deliveries are kept 7 days by default. A pending delivery is retried on the schedule of docs/webhooks-delivery.md; redeliver queues a finished one again, with the same webhook-id.' }),
    formError(), h('div', { class: 'row' }, narrow(field('Deliveries a page', size, 'size')), h('div', { class: 'actions' }, refresh, close)), pager.el, list);
  size.addEventListener('change', () => guard(panel, () => pager.reload()));
  panel.reload = () => guard(panel, () => pager.reload());
  return panel;
}

export async function render(root) {
  const secretSlot = h('div', { id: 'secret-slot' });
  const deliverySlot = h('div', { id: 'delivery-slot' });
  const list = h('div', { id: 'webhook-list' });
  const listPanel = h('section', { id: 'webhook-list-panel' });

  function showDeliveries(w) {
    const p = deliveriesPanel(w);
    clear(deliverySlot).append(p);
    p.scrollIntoView({ block: 'start' });
    return p.reload();
  }

  const pager = new Pager((start) => api('GET', `/webhooks${query({ start, size: 20 })}`), (rows) => clear(list).append(table([
    { label: 'Name', value: (w) => h('span', { class: 'webhook-name', text: w.name }) },
    { label: 'URL', value: (w) => h('code', { text: w.url }) },
    { label: 'Events', value: (w) => h('span', { class: 'webhook-events', text: eventsLabel(w.events) }) },
    { label: 'Status', value: (w) => h('span', { class: 'webhook-status', text: w.status }) },
    { label: 'Disabled because', value: (w) => h('span', { class: 'webhook-disabled-reason', text: w.disabled_reason || '' }) },
    { label: 'Id', value: (w) => shortId(w.id) },
    { label: 'Actions', value: (w) => h('div', { class: 'actions' },
      h('button', { type: 'button', 'data-action': 'deliveries', 'aria-label': `Deliveries of ${w.name}`, onclick: () => showDeliveries(w) }, 'Deliveries'),
      h('button', { type: 'button', 'data-action': 'test', 'aria-label': `Send a test event to ${w.name}`, onclick: () => guard(listPanel, async () => {
        await api('POST', `/webhooks/${encodeURIComponent(w.id)}/test`);
        await showDeliveries(w);
      }) }, 'Send test event'),
      h('button', { type: 'button', 'data-action': 'edit', 'aria-label': `Edit ${w.name}`, onclick: () => edit(w) }, 'Edit'),
      h('button', { type: 'button', 'data-action': 'toggle', 'aria-label': `${w.status === 'enabled' ? 'Disable' : 'Enable'} ${w.name}`,
        onclick: () => guard(listPanel, async () => {
          await api('PUT', `/webhooks/${encodeURIComponent(w.id)}`, webhookBody(w, { status: w.status === 'enabled' ? 'disabled' : 'enabled' }));
          await pager.fetch();
        }) }, w.status === 'enabled' ? 'Disable' : 'Enable'),
      confirmButton('Rotate secret', 'Confirm: new secret', () => guard(listPanel, async () => {
        const out = await api('POST', `/webhooks/${encodeURIComponent(w.id)}/rotate-secret`);
        clear(secretSlot).append(secretBox(out, 'The new signing secret'));
        secretSlot.scrollIntoView({ block: 'start' });
      }), { 'data-action': 'rotate', 'aria-label': `Rotate the secret of ${w.name}` }),
      confirmButton('Delete', 'Confirm delete', () => guard(listPanel, async () => {
        await api('DELETE', `/webhooks/${encodeURIComponent(w.id)}`);
        if (deliverySlot.querySelector(`[data-webhook="${CSS.escape(w.id)}"]`)) clear(deliverySlot);
        await pager.fetch();
      }), { 'data-action': 'delete', 'aria-label': `Delete ${w.name}` })) },
  ], rows, 'No webhooks.')), 'webhooks');
  listPanel.append(h('h2', { text: 'All webhooks' }), formError(), pager.el, list);

  const name = h('input', { id: 'webhook-name', name: 'name', maxlength: 200 });
  const url = h('input', { id: 'webhook-url', name: 'url', type: 'url', placeholder: 'https://receiver.example.com/hooks', spellcheck: 'false' });
  const email = h('input', { id: 'webhook-notify-email', name: 'notify_email', type: 'email', autocomplete: 'off' });
  const status = h('select', { id: 'webhook-status', name: 'status' }, ['enabled', 'disabled'].map((s) => h('option', { value: s, text: s })));
  const events = h('fieldset', { id: 'webhook-events', class: 'perms' }, h('legend', { text: 'Events' }));
  const eventsErr = h('div', { class: 'field-error', 'data-error-for': 'events', role: 'alert' });

  async function loadEventTypes() {
    const types = await api('GET', '/webhooks/event-types');
    const box = (value, label) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: 'event', value, id: `event-${value === '*' ? 'all' : value.replaceAll('.', '-')}` }), ` ${label}`);
    clear(events).append(h('legend', { text: 'Events' }),
      h('p', { class: 'muted', text: '"*" is every event that is not high-volume, including types added later. High-volume events are sent only to webhooks that name them.' }),
      h('div', { class: 'row' }, box('*', '* (every event but the high-volume ones)'),
        types.map((t) => box(t, highVolume[t] ? `${t} (high-volume: ${highVolume[t]})` : t))));
  }

  let editing = null;
  const heading = h('h2', { id: 'webhook-form-title', text: 'New webhook' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'webhook-create' }, 'Create webhook');
  const cancel = h('button', { type: 'button', id: 'webhook-cancel', hidden: true }, 'Cancel');
  function fill(w) {
    name.value = w ? w.name : '';
    url.value = w ? w.url : '';
    email.value = w && w.notify_email ? w.notify_email : '';
    status.value = w ? w.status : 'enabled';
    for (const cb of events.querySelectorAll('input[name=event]')) cb.checked = Boolean(w && w.events.includes(cb.value));
  }
  function stopEditing() {
    editing = null;
    heading.textContent = 'New webhook';
    submit.textContent = 'Create webhook';
    cancel.hidden = true;
    fill(null);
  }
  function edit(w) {
    editing = w;
    heading.textContent = `Edit ${w.name}`;
    submit.textContent = 'Save changes';
    cancel.hidden = false;
    fill(w);
    form.scrollIntoView({ block: 'start' });
    name.focus();
  }
  cancel.addEventListener('click', stopEditing);

  const form = h('form', { class: 'panel', id: 'webhook-form', novalidate: true },
    heading,
    h('div', { class: 'row' }, field('Name', name, 'name'), field('URL (https)', url, 'url'),
      field('Notify e-mail (optional)', email, 'notify_email', 'Told when the vault disables the webhook.'), field('Status', status, 'status')),
    events, eventsErr,
    formError(),
    h('div', { class: 'actions' }, submit, cancel));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(form, async () => {
      const body = {
        name: name.value,
        url: url.value.trim(),
        events: [...events.querySelectorAll('input[name=event]:checked')].map((c) => c.value),
        status: status.value,
      };
      if (email.value.trim()) body.notify_email = email.value.trim();
      if (editing) {
        await api('PUT', `/webhooks/${encodeURIComponent(editing.id)}`, body);
        stopEditing();
        await pager.fetch();
        return;
      }
      const w = await api('POST', '/webhooks', body);
      clear(secretSlot).append(secretBox(w, 'The signing secret'));
      stopEditing();
      await pager.reload();
    });
  });

  root.append(h('h1', { text: 'Webhooks' }),
    h('p', { class: 'muted', text: 'Events of this tenant are POSTed to these URLs, signed with each webhook\'s secret (docs/webhooks.md).' }),
    secretSlot, form, listPanel, deliverySlot);
  await guard(form, loadEventTypes);
  await guard(listPanel, () => pager.reload());
}
