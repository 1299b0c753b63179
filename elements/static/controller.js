// controller.js: the hidden frame that tokenizes. The merchant's page
// asks it for a token or a token intent; it collects the values from the
// field frames of its own origin and instance, calls the vault's API (its
// own origin: no CORS) with the public key or the session key, and
// answers the page with what a merchant may see: the id, the type, a
// card's brand and last four (an intent: the API's answer, which holds no
// data), or the errors, scrubbed of anything typed.
'use strict';
(() => {
  const params = new URLSearchParams(location.search);
  const parentOrigin = params.get('origin');
  const instance = params.get('instance');
  const publicKey = params.get('key');
  const { PROTOCOL } = tvCommon;
  if (!parentOrigin || !instance || !publicKey || window.parent === window) return;

  let sessionKey;
  const collecting = new Map(); // request id -> {want, values, done}
  const COLLECT_TIMEOUT = 10000;

  function toParent(msg) {
    window.parent.postMessage({ protocol: PROTOCOL, instance, ...msg }, parentOrigin);
  }

  const slot = (kind, name) => kind + ':' + (name ?? '');

  // collect asks every frame of the page for its value: only frames of
  // this origin get the message, and only this instance's answer.
  function collect(id, fields) {
    return new Promise((resolve, reject) => {
      const want = new Set(fields.map((f) => slot(f.kind, f.name)));
      const timer = setTimeout(() => {
        collecting.delete(id);
        reject(Object.assign(new Error('a field did not answer'), { code: 'field_unreachable' }));
      }, COLLECT_TIMEOUT);
      collecting.set(id, { want, values: new Map(), done: (values) => { clearTimeout(timer); resolve(values); } });
      const frames = window.parent.frames;
      for (let i = 0; i < frames.length; i++) {
        if (frames[i] !== window) frames[i].postMessage({ protocol: PROTOCOL, instance, type: 'collect', id }, location.origin);
      }
    });
  }

  function invalid(errors) {
    return Object.assign(new Error('some fields are incomplete or invalid'), { code: 'invalid', fields: errors });
  }

  // body builds the API request from the page's request and the fields'
  // values; secrets lists what was typed, to scrub from errors.
  function body(op, request, values, secrets) {
    const errors = [];
    for (const v of values.values()) {
      if (!v.complete) errors.push({ kind: v.kind, name: v.name, message: v.empty ? 'required' : (v.error ?? 'invalid') });
    }
    const req = { ...request };
    delete req.field;
    let data;
    if (request.type === 'card') {
      const get = (kind) => [...values.values()].find((v) => v.kind === kind);
      const number = get('card-number'), expiry = get('card-expiry'), cvc = get('card-cvc');
      if (!number) errors.push({ kind: 'card-number', message: 'no card number field is mounted' });
      if (!expiry) errors.push({ kind: 'card-expiry', message: 'no expiry field is mounted' });
      if (errors.length) throw invalid(errors);
      data = { ...number.value, ...expiry.value, ...(cvc ? cvc.value : {}) };
      secrets.push(data.number);
      if (data.cvc) secrets.push(data.cvc);
    } else {
      const texts = [...values.values()].filter((v) => v.kind === 'text');
      const v = request.field !== undefined ? texts.find((t) => t.name === request.field) : (texts.length === 1 ? texts[0] : undefined);
      if (!v) throw invalid([{ kind: 'text', name: request.field, message: 'name the text field to tokenize: {field: name}' }]);
      if (!v.complete) throw invalid([{ kind: 'text', name: v.name, message: v.empty ? 'required' : (v.error ?? 'invalid') }]);
      data = v.value;
      if (data.length >= 3) secrets.push(data);
    }
    req.data = data;
    if (op === 'intent') return { type: req.type, data: req.data, ...(req.expires_at ? { expires_at: req.expires_at } : {}) };
    return req;
  }

  // scrub replaces any string holding a typed secret: the API's errors
  // name paths and rules, but a page must not get a value back even if
  // one ever did.
  function scrub(s, secrets) {
    if (typeof s !== 'string') return undefined;
    const digitsOnly = s.replace(/\D/g, '');
    for (const x of secrets) {
      if (s.includes(x) || (/^\d+$/.test(x) && x.length >= 12 && digitsOnly.includes(x))) return 'invalid value';
    }
    return s.slice(0, 500);
  }

  const PATH_FIELDS = [
    [/^data\.number/, 'card-number'], [/^data\.expiration_(month|year)/, 'card-expiry'], [/^data\.cvc/, 'card-cvc'], [/^data/, 'text'],
  ];

  async function call(op, request, fields) {
    const secrets = [];
    // Only the fields this request uses: a card's, or the text field it
    // names (or the only one).
    const used = fields.filter((f) => request.type === 'card' ? f.kind.startsWith('card-')
      : f.kind === 'text' && (request.field === undefined || f.name === request.field));
    const values = await collect(crypto.randomUUID(), used);
    const req = body(op, request, values, secrets);
    const res = await fetch(op === 'intent' ? '../../token-intents' : '../../tokens', {
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', 'SVC-API-KEY': sessionKey ?? publicKey },
      body: JSON.stringify(req),
    });
    let answer = null;
    try { answer = await res.json(); } catch (e) { answer = null; }
    if (!res.ok) {
      const fieldErrors = [];
      for (const [path, msgs] of Object.entries(answer?.errors ?? {})) {
        const kind = (PATH_FIELDS.find(([re]) => re.test(path)) ?? [null, undefined])[1];
        for (const m of [].concat(msgs)) fieldErrors.push({ kind, path: scrub(path, secrets), message: scrub(m, secrets) });
      }
      throw Object.assign(new Error(scrub(answer?.detail ?? answer?.title, secrets) ?? `the vault answered ${res.status}`),
        { code: res.status === 400 ? 'invalid' : 'api_error', status: res.status, fields: fieldErrors.length ? fieldErrors : undefined });
    }
    if (op === 'intent') {
      const { id, type, card, created_at, expires_at } = answer;
      return { id, type, card, created_at, expires_at };
    }
    const out = { id: answer.id, type: answer.type };
    if (req.type === 'card') {
      out.brand = tvCommon.brand(req.data.number);
      out.last4 = req.data.number.slice(-4);
    }
    return out;
  }

  window.addEventListener('message', async (ev) => {
    const d = ev.data;
    if (!d || typeof d !== 'object' || d.protocol !== PROTOCOL || d.instance !== instance) return;
    if (ev.source === window.parent && ev.origin === parentOrigin) {
      if (d.type === 'config') {
        sessionKey = typeof d.sessionKey === 'string' && d.sessionKey !== '' ? d.sessionKey : undefined;
        toParent({ type: 'configured' });
      } else if ((d.type === 'tokenize' || d.type === 'intent') && typeof d.id === 'string') {
        try {
          if (!Array.isArray(d.fields)) throw new Error('bad request');
          tvCommon.checkRequest(d.type, d.request); // again: the frame trusts nothing it is sent
          const result = await call(d.type, d.request, d.fields);
          toParent({ type: 'result', id: d.id, ok: true, result });
        } catch (e) {
          toParent({ type: 'result', id: d.id, ok: false,
            error: { code: e.code ?? 'failed', message: String(e.message ?? e).slice(0, 500), status: e.status, fields: e.fields } });
        }
      }
      return;
    }
    if (ev.origin !== location.origin || d.type !== 'value') return;
    const c = collecting.get(d.id);
    if (!c) return;
    const s = slot(d.kind, d.name);
    if (!c.want.has(s)) return;
    c.values.set(s, { kind: d.kind, name: d.name, complete: !!d.complete, empty: !!d.empty, error: d.error, value: d.value });
    if (c.values.size === c.want.size) {
      collecting.delete(d.id);
      c.done(c.values);
    }
  });

  toParent({ type: 'ready' });
})();
