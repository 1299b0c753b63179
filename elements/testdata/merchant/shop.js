// The merchant's page of the browser tests: it loads the elements from
// the vault named by ?vault= (as a script tag, or as a module with
// mode=module), mounts the fields, and records everything it is told:
// every message the window receives (window.__messages), every event
// (window.__events), the results and errors. The test reads them, and
// the page's DOM, looking for the card number and the CVC.
'use strict';
window.__messages = [];
window.__events = [];
window.__focus = [];
window.addEventListener('message', (ev) => {
  let data;
  try { data = JSON.stringify(ev.data); } catch (e) { data = String(ev.data); }
  window.__messages.push({ origin: ev.origin, data });
}, true);

const q = new URLSearchParams(location.search);
const vault = q.get('vault');
const style = {
  base: { fontFamily: 'system-ui, sans-serif', fontSize: '16px', color: '#1f2328', placeholderColor: '#8c959f', padding: '10px 12px' },
  focus: { backgroundColor: '#f0f6ff' },
  invalid: { color: '#cf222e' },
  complete: { color: '#1a7f37' },
};

async function start(E) {
  const elements = E.create({ key: q.get('key'), sessionKey: q.get('session') ?? undefined, style, loadTimeout: Number(q.get('timeout') ?? 10000) });
  window.__elements = elements;
  const fields = [
    elements.field('card-number', { label: 'Card number' }),
    elements.field('card-expiry', { label: 'Expiration date' }),
    elements.field('card-cvc', { label: 'Security code' }),
    elements.field('text', { name: 'postal_code', label: 'Postal code', placeholder: '12345', pattern: '[0-9]{5}', inputMode: 'numeric', autocomplete: 'postal-code' }),
  ];
  window.__fields = fields;
  for (const f of fields) {
    f.on('focus', (e) => window.__focus.push(e.kind));
    f.on('change', (e) => {
      window.__events.push(e);
      if (e.kind === 'card-number') document.getElementById('brand').textContent = e.brand === 'unknown' ? '' : e.brand;
    });
  }
  try {
    await Promise.all(['#number', '#expiry', '#cvc', '#postal'].map((sel, i) => fields[i].mount(sel)));
    window.__mounted = true;
  } catch (e) {
    window.__mountError = e.code + ': ' + e.message;
  }
  document.getElementById('pay').addEventListener('click', () => window.__pay());
}

// __pay tokenizes the card (or, with intent, creates a token intent) and
// records the answer or the error.
window.__pay = async (intent) => {
  try {
    const r = intent ? await window.__elements.createTokenIntent({ type: 'card' }) : await window.__elements.tokenize({ type: 'card' });
    window.__result = r;
    document.getElementById('status').textContent = 'Paid with ' + r.brand + ' ending ' + r.last4;
    return { ok: true, result: r };
  } catch (e) {
    const err = { ok: false, code: e.code, status: e.status, message: e.message, fields: e.fields };
    window.__failure = err;
    document.getElementById('status').textContent = e.message;
    return err;
  }
};

// __styleRefused reports whether a style option carrying a script-bearing
// value is refused when the field is created, before any frame exists.
window.__styleRefused = () => {
  const bad = [
    { base: { backgroundColor: 'url(javascript:alert(1))' } },
    { base: { color: 'red; background: url(x)' } },
    { base: { fontFamily: '} body { background: red' } },
    { base: { color: 'expression(alert(1))' } },
    { base: { color: 'red\\3b' } },
    { base: { behavior: 'url(x.htc)' } },
    { hover: { color: 'red' } },
    { base: { color: '<script>' } },
  ];
  return bad.map((s) => {
    try { window.__elements.field('text', { name: 'x' + Math.random().toString(36).slice(2), style: s }); return 'accepted'; } catch (e) { return e.name; }
  });
};

if (q.get('mode') === 'module') {
  import(vault + '/elements/v1/elements.mjs').then((m) => start(m), (e) => { window.__mountError = 'import: ' + e.message; });
} else {
  const s = document.createElement('script');
  s.src = vault + '/elements/v1/elements.js';
  s.onload = () => start(window.TokenVaultElements);
  s.onerror = () => { window.__mountError = 'elements.js did not load'; };
  document.head.appendChild(s);
}
