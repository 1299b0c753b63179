// merchant.js: the merchant page's side of the elements (served inside
// elements.js, after common.js, in one closure). It mounts the frames,
// relays options to them and events from them, and asks the controller
// frame to tokenize. It never holds a field's value: the frames keep
// them, and send them only to the controller frame, of the vault's
// origin, which sends them only to the vault's API.

const FIELD_KINDS = ['card-number', 'card-expiry', 'card-cvc', 'text'];
const EVENTS = ['ready', 'change', 'focus', 'blur', 'escape'];

// The directory elements.js was loaded from, when it was loaded by a
// script tag; elements.mjs passes its own.
const scriptBase = (typeof document !== 'undefined' && document.currentScript && document.currentScript.src)
  ? new URL('./', document.currentScript.src).href : undefined;

class ElementsError extends Error {
  constructor(code, message, details) {
    super(message);
    this.name = 'ElementsError';
    this.code = code;
    if (details) Object.assign(this, details);
  }
}

function randomID() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function target(where) {
  const el = typeof where === 'string' ? document.querySelector(where) : where;
  if (!el || typeof el.appendChild !== 'function') throw new ElementsError('mount_target', `mount: no element ${typeof where === 'string' ? where : ''}`);
  return el;
}

class Field {
  constructor(elements, kind, options) {
    this._elements = elements;
    this.kind = kind;
    this.name = options.name;
    this._config = {
      name: options.name,
      label: tvCommon.checkText('label', options.label),
      placeholder: tvCommon.checkText('placeholder', options.placeholder),
      pattern: tvCommon.checkText('pattern', options.pattern, 500),
      patternMessage: tvCommon.checkText('patternMessage', options.patternMessage),
      autocomplete: tvCommon.checkText('autocomplete', options.autocomplete, 50),
      inputMode: tvCommon.checkText('inputMode', options.inputMode, 20),
      maxLength: options.maxLength === undefined ? undefined : Number(options.maxLength),
      style: tvCommon.checkStyle(options.style ?? elements._style),
    };
    if (this._config.autocomplete !== undefined && !/^[a-z0-9 -]*$/.test(this._config.autocomplete)) {
      throw new TypeError('autocomplete: letters, digits, spaces and - only');
    }
    if (this._config.pattern !== undefined) new RegExp(this._config.pattern, 'u'); // throws a SyntaxError now, not in the frame
    this._handlers = {};
    this.state = { empty: true, complete: false, error: undefined };
    this.iframe = null;
  }

  // on registers handler for event: ready, change ({empty, complete,
  // error, brand, last4}), focus, blur, escape.
  on(event, handler) {
    if (!EVENTS.includes(event)) throw new TypeError(`on: unknown event ${event} (${EVENTS.join(', ')})`);
    (this._handlers[event] ??= []).push(handler);
    return this;
  }

  off(event, handler) {
    this._handlers[event] = (this._handlers[event] ?? []).filter((h) => h !== handler);
    return this;
  }

  _emit(event, payload) {
    for (const h of this._handlers[event] ?? []) {
      try { h(payload); } catch (e) { setTimeout(() => { throw e; }); }
    }
  }

  // mount puts the field's frame into where (an element or a selector)
  // and resolves once it is ready; it rejects with an ElementsError
  // (code frame_blocked) when the frame does not load: most often, the
  // page's origin is not in the application's allowed_origins.
  mount(where) {
    if (this.iframe) throw new ElementsError('mounted', 'mount: this field is mounted already');
    const el = target(where);
    this.iframe = this._elements._frame(this.kind, { title: this._config.label ?? this.kind });
    this.iframe.className = 'tokenvault-element tokenvault-element-' + this.kind;
    el.appendChild(this.iframe);
    this._ready = this._elements._awaitReady(this);
    return this._ready;
  }

  _onMessage(d) {
    switch (d.type) {
      case 'ready':
        this.iframe.style.height = Math.max(0, Math.min(200, Number(d.height) || 0)) + 'px';
        this._post({ type: 'config', config: this._config });
        return;
      case 'configured':
        this._resolveReady?.();
        this._emit('ready', { kind: this.kind });
        return;
      case 'height':
        this.iframe.style.height = Math.max(0, Math.min(200, Number(d.height) || 0)) + 'px';
        return;
      case 'change': {
        const e = { kind: this.kind, name: this.name, empty: !!d.empty, complete: !!d.complete,
          error: typeof d.error === 'string' ? d.error : undefined };
        if (this.kind === 'card-number') {
          e.brand = typeof d.brand === 'string' ? d.brand : 'unknown';
          if (e.complete && typeof d.last4 === 'string' && /^[0-9]{4}$/.test(d.last4)) e.last4 = d.last4;
        }
        this.state = e;
        this._emit('change', e);
        return;
      }
      case 'focus': case 'blur': case 'escape':
        this._emit(d.type, { kind: this.kind, name: this.name });
    }
  }

  _post(msg) {
    this._elements._post(this.iframe, msg);
  }

  focus() { this._post({ type: 'focus' }); }
  blur() { this._post({ type: 'blur' }); }
  clear() { this._post({ type: 'clear' }); }

  // destroy removes the frame: its value is gone.
  destroy() {
    this.iframe?.remove();
    this._elements._fields = this._elements._fields.filter((f) => f !== this);
    this.iframe = null;
  }
}

class Elements {
  constructor(options) {
    if (!options || typeof options !== 'object') throw new TypeError('create: options are required ({key})');
    if (typeof options.key !== 'string' || options.key === '') throw new TypeError('create: key (a public application key) is required');
    const base = options.vaultURL ?? scriptBase;
    if (!base) throw new TypeError('create: vaultURL is required when elements.js was not loaded by a script tag');
    this._base = new URL('./', base).href;
    this.vaultOrigin = new URL(this._base).origin;
    this._key = options.key;
    this._sessionKey = options.sessionKey === undefined ? undefined : String(options.sessionKey);
    this._style = tvCommon.checkStyle(options.style);
    this._loadTimeout = Number(options.loadTimeout ?? 10000);
    this.instance = randomID();
    this._fields = [];
    this._pending = new Map();
    this._controller = null;
    this._listener = (ev) => this._receive(ev);
    window.addEventListener('message', this._listener);
  }

  // field creates a field of kind card-number, card-expiry, card-cvc or
  // text (options.name names a text field: its value's key).
  field(kind, options = {}) {
    if (!FIELD_KINDS.includes(kind)) throw new TypeError(`field: unknown kind ${kind} (${FIELD_KINDS.join(', ')})`);
    if (kind === 'text' && (typeof options.name !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(options.name))) {
      throw new TypeError('field: a text field needs a name (letters, digits, _)');
    }
    if (this._fields.some((f) => f.kind === kind && f.name === options.name)) {
      throw new TypeError(`field: there is a ${kind} field${options.name ? ' named ' + options.name : ''} already`);
    }
    const f = new Field(this, kind, options);
    this._fields.push(f);
    return f;
  }

  _frame(kind, { title }) {
    const u = new URL(kind + '.html', this._base);
    u.searchParams.set('key', this._key);
    u.searchParams.set('origin', location.origin);
    u.searchParams.set('instance', this.instance);
    const iframe = document.createElement('iframe');
    iframe.src = u.href;
    iframe.title = title;
    iframe.setAttribute('frameborder', '0');
    iframe.setAttribute('scrolling', 'no');
    iframe.setAttribute('allowtransparency', 'true');
    iframe.style.border = 'none';
    iframe.style.width = '100%';
    iframe.style.display = 'block';
    iframe.style.colorScheme = 'normal';
    return iframe;
  }

  // _awaitReady resolves when target's frame has said it is configured;
  // it rejects when the frame loaded (or did not load) and did not say
  // so within loadTimeout: the browser showed an error page instead,
  // as it does when frame-ancestors refuses this page's origin.
  _awaitReady(target) {
    return new Promise((resolve, reject) => {
      let timer;
      const fail = () => reject(new ElementsError('frame_blocked',
        `the vault's ${target.kind ?? 'controller'} frame did not start within ${this._loadTimeout} ms: ` +
        `is ${location.origin} in the public application's allowed_origins, and the key right?`));
      target._resolveReady = () => { clearTimeout(timer); target._resolveReady = null; resolve(); };
      // The timeout counts from the frame's load (a refused frame loads
      // an error page) and, failing that, from now, three times as long.
      timer = setTimeout(fail, 3 * this._loadTimeout);
      target.iframe.addEventListener('load', () => {
        if (!target._resolveReady) return;
        clearTimeout(timer);
        timer = setTimeout(fail, this._loadTimeout);
      }, { once: true });
    });
  }

  _ensureController() {
    if (this._controller) return this._controller.ready;
    const c = { kind: 'controller', iframe: this._frame('controller', { title: 'Token Vault' }) };
    c.iframe.hidden = true;
    c.iframe.setAttribute('aria-hidden', 'true');
    c.iframe.tabIndex = -1;
    document.body.appendChild(c.iframe);
    c.ready = this._awaitReady(c);
    this._controller = c;
    return c.ready;
  }

  _post(iframe, msg) {
    if (!iframe || !iframe.contentWindow) return;
    iframe.contentWindow.postMessage({ protocol: tvCommon.PROTOCOL, instance: this.instance, ...msg }, this.vaultOrigin);
  }

  // _receive accepts only messages of the vault's origin, of this
  // instance, from one of its own frames.
  _receive(ev) {
    if (ev.origin !== this.vaultOrigin) return;
    const d = ev.data;
    if (!d || typeof d !== 'object' || d.protocol !== tvCommon.PROTOCOL || d.instance !== this.instance) return;
    const c = this._controller;
    if (c && ev.source === c.iframe.contentWindow) {
      if (d.type === 'ready') this._post(c.iframe, { type: 'config', sessionKey: this._sessionKey });
      else if (d.type === 'configured') c._resolveReady?.();
      else if (d.type === 'result') this._settle(d);
      return;
    }
    const f = this._fields.find((x) => x.iframe && ev.source === x.iframe.contentWindow);
    if (f) f._onMessage(d);
  }

  _settle(d) {
    const p = this._pending.get(d.id);
    if (!p) return;
    this._pending.delete(d.id);
    if (d.ok) p.resolve(d.result);
    else p.reject(new ElementsError(d.error?.code ?? 'failed', d.error?.message ?? 'tokenization failed',
      { status: d.error?.status, fields: d.error?.fields }));
  }

  async _call(op, request) {
    tvCommon.checkRequest(op, request);
    const fields = this._fields.filter((f) => f.iframe).map((f) => ({ kind: f.kind, name: f.name }));
    if (fields.length === 0) throw new ElementsError('no_fields', `${op}: no field is mounted`);
    await Promise.all(this._fields.filter((f) => f.iframe).map((f) => f._ready));
    await this._ensureController();
    const id = randomID();
    const out = new Promise((resolve, reject) => this._pending.set(id, { resolve, reject }));
    this._post(this._controller.iframe, { type: op, id, request: JSON.parse(JSON.stringify(request)), fields });
    return out;
  }

  // tokenize creates a token from the mounted fields ({type: 'card', ...}
  // with the card fields; {type: 'token', field: name} with a text
  // field) and the request's other fields (containers, metadata, ...).
  // It resolves to {id, type, brand, last4} for a card, {id, type} for
  // another, and rejects with an ElementsError (code invalid with fields,
  // or the API's problem).
  tokenize(request) { return this._call('tokenize', request); }


  // createTokenIntent creates a token intent instead: it resolves to the
  // intent as the API answers it to a public key (id, type, card summary,
  // expires_at), for the merchant's server to convert with a private key.
  createTokenIntent(request) { return this._call('intent', request); }

  // destroy removes every frame and stops listening.
  destroy() {
    for (const f of [...this._fields]) f.destroy();
    this._controller?.iframe.remove();
    this._controller = null;
    window.removeEventListener('message', this._listener);
  }
}

const TokenVaultElements = Object.freeze({
  version: 'v1',
  create: (options) => new Elements(options),
  ElementsError,
});
globalThis.TokenVaultElements = TokenVaultElements;
