// field.js: one field's frame. It holds the value the user types, shows
// it, validates it, and tells the merchant's page only what it may know
// (empty, complete, the error, a card's brand and, once complete, last
// four). It gives the value only to the controller frame of its own
// origin and instance, when that frame asks for it.
'use strict';
(() => {
  const params = new URLSearchParams(location.search);
  const parentOrigin = params.get('origin');
  const instance = params.get('instance');
  const kind = document.body.dataset.kind;
  const input = document.getElementById('input');
  const label = document.getElementById('label');
  const errorBox = document.getElementById('error');
  const { PROTOCOL } = tvCommon;
  if (!parentOrigin || !instance || window.parent === window) return;

  let config = null;
  const sibling = { brand: 'unknown' }; // what the card number frame tells the cvc frame
  const state = { focused: false };
  let pattern = null;

  function toParent(msg) {
    window.parent.postMessage({ protocol: PROTOCOL, instance, ...msg }, parentOrigin);
  }

  // toSiblings posts msg to every frame of the page; only documents of
  // this origin receive it (the target origin), and they check the
  // instance.
  function toSiblings(msg) {
    const frames = window.parent.frames;
    for (let i = 0; i < frames.length; i++) {
      if (frames[i] !== window) frames[i].postMessage({ protocol: PROTOCOL, instance, ...msg }, location.origin);
    }
  }

  // height is what the frame needs: the input and the error, if shown.
  const height = () => Math.ceil(input.getBoundingClientRect().height + errorBox.getBoundingClientRect().height);

  // A click anywhere in the frame is a click on the field.
  document.addEventListener('mousedown', (ev) => {
    if (ev.target !== input) { ev.preventDefault(); input.focus(); }
  });

  const digits = () => input.value.replace(/\D/g, '');

  // Each kind: its input's attributes, how it formats what is typed, and
  // its value and error.
  const kinds = {
    'card-number': {
      attrs: { autocomplete: 'cc-number', inputmode: 'numeric', 'aria-label': 'Card number', placeholder: '1234 1234 1234 1234', maxlength: '23' },
      format() {
        const d = digits().slice(0, 19);
        input.value = tvCommon.formatCard(d);
      },
      check() {
        const d = digits();
        const b = tvCommon.brand(d);
        const lengths = b === 'unknown' ? [13, 14, 15, 16, 17, 18, 19] : tvCommon.cardLayout(b).lengths;
        const complete = lengths.includes(d.length) && tvCommon.luhn(d);
        let error;
        // While the user types, an error shows only once no more digits
        // can make the number right.
        if (d.length > 0 && !complete && (!state.focused || d.length >= Math.max(...lengths))) {
          error = lengths.includes(d.length) || d.length > Math.max(...lengths) ? 'Your card number is invalid.' : 'Your card number is incomplete.';
        }
        return { empty: d.length === 0, complete, error, brand: b, last4: complete ? d.slice(-4) : undefined };
      },
      value: () => ({ number: digits() }),
    },
    'card-expiry': {
      attrs: { autocomplete: 'cc-exp', inputmode: 'numeric', 'aria-label': 'Expiration date (MM / YY)', placeholder: 'MM / YY', maxlength: '7' },
      format(ev) {
        let d = digits().slice(0, 4);
        if (d.length === 1 && d > '1') d = '0' + d;
        const deleting = ev && ev.inputType && ev.inputType.startsWith('delete');
        input.value = d.length >= 2 && !(deleting && d.length === 2) ? d.slice(0, 2) + ' / ' + d.slice(2) : d;
      },
      check() {
        const d = digits();
        const month = Number(d.slice(0, 2)), year = 2000 + Number(d.slice(2, 4));
        let error;
        if (d.length >= 2 && (month < 1 || month > 12)) error = "Your card's expiration month is invalid.";
        else if (d.length === 4) {
          const now = new Date();
          if (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)) error = "Your card's expiration date is in the past.";
        } else if (d.length > 0 && !state.focused) error = "Your card's expiration date is incomplete.";
        return { empty: d.length === 0, complete: d.length === 4 && !error, error };
      },
      value: () => {
        const d = digits();
        return { expiration_month: Number(d.slice(0, 2)), expiration_year: 2000 + Number(d.slice(2, 4)) };
      },
    },
    'card-cvc': {
      attrs: { autocomplete: 'cc-csc', inputmode: 'numeric', 'aria-label': 'Security code (CVC)', placeholder: 'CVC', maxlength: '4' },
      format() { input.value = digits().slice(0, 4); },
      check() {
        const d = digits();
        const want = tvCommon.cardLayout(sibling.brand).cvc;
        let error;
        if (d.length > 0 && d.length !== want && (d.length > want || !state.focused)) error = "Your card's security code is incomplete.";
        return { empty: d.length === 0, complete: d.length === want, error };
      },
      value: () => ({ cvc: digits() }),
    },
    text: {
      attrs: { autocomplete: 'off', 'aria-label': 'Text' },
      format() {},
      check() {
        const v = input.value;
        let error;
        if (v !== '' && pattern && !pattern.test(v) && !state.focused) error = config.patternMessage ?? 'This value is not in the expected format.';
        return { empty: v === '', complete: v !== '' && (!pattern || pattern.test(v)), error };
      },
      value: () => input.value,
    },
  };
  const k = kinds[kind];
  for (const [name, value] of Object.entries(k.attrs)) input.setAttribute(name, value);

  // The merchant's style, per state, applied through the CSSOM: each
  // property checked again here (tvCommon.checkStyle), whatever the page
  // sent, and set with setProperty, so that no value becomes CSS text.
  let placeholderRule = null;
  function applyStyle(complete, invalid) {
    const style = config?.style ?? {};
    const merged = {};
    for (const st of ['base', state.focused && 'focus', invalid && 'invalid', complete && 'complete']) {
      if (st && style[st]) Object.assign(merged, style[st]);
    }
    for (const prop of Object.keys(tvCommon.STYLE_PROPERTIES)) {
      if (prop === 'placeholderColor') continue;
      const css = tvCommon.STYLE_PROPERTIES[prop];
      if (merged[prop] === undefined) input.style.removeProperty(css);
      else input.style.setProperty(css, merged[prop]);
    }
    if (!placeholderRule) {
      const sheet = document.styleSheets[0];
      sheet.insertRule('#input::placeholder {}', sheet.cssRules.length);
      placeholderRule = sheet.cssRules[sheet.cssRules.length - 1];
    }
    if (merged.placeholderColor === undefined) placeholderRule.style.removeProperty('color');
    else placeholderRule.style.setProperty('color', merged.placeholderColor);
    document.body.classList.toggle('focus', state.focused);
  }

  let last = '';
  function update() {
    const r = k.check();
    const invalid = !!r.error;
    input.setAttribute('aria-invalid', String(invalid));
    if (errorBox.textContent !== (r.error ?? '')) errorBox.textContent = r.error ?? '';
    applyStyle(r.complete, invalid);
    const msg = { type: 'change', empty: r.empty, complete: r.complete, error: r.error };
    if (kind === 'card-number') {
      msg.brand = r.brand;
      msg.last4 = r.last4;
      toSiblings({ type: 'brand', brand: r.brand });
    }
    const s = JSON.stringify(msg);
    if (s !== last) {
      last = s;
      toParent(msg);
      toParent({ type: 'height', height: height() });
    }
  }

  input.addEventListener('input', (ev) => { k.format(ev); update(); });
  input.addEventListener('focus', () => { state.focused = true; update(); toParent({ type: 'focus' }); });
  input.addEventListener('blur', () => { state.focused = false; update(); toParent({ type: 'blur' }); });
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') toParent({ type: 'escape' }); });

  function configure(c) {
    // The page's options, checked again: a frame trusts nothing it is
    // sent.
    config = {
      name: typeof c.name === 'string' ? c.name : undefined,
      style: tvCommon.checkStyle(c.style),
      label: tvCommon.checkText('label', c.label),
      placeholder: tvCommon.checkText('placeholder', c.placeholder),
      patternMessage: tvCommon.checkText('patternMessage', c.patternMessage),
      autocomplete: tvCommon.checkText('autocomplete', c.autocomplete, 50),
      inputMode: tvCommon.checkText('inputMode', c.inputMode, 20),
    };
    if (config.label !== undefined) {
      label.textContent = config.label;
      input.setAttribute('aria-label', config.label);
    }
    if (config.placeholder !== undefined) input.setAttribute('placeholder', config.placeholder);
    if (kind === 'text') {
      if (typeof c.pattern === 'string') pattern = new RegExp('^(?:' + c.pattern + ')$', 'u');
      if (config.autocomplete && /^[a-z0-9 -]*$/.test(config.autocomplete)) input.setAttribute('autocomplete', config.autocomplete);
      if (config.inputMode && /^[a-z]*$/.test(config.inputMode)) input.setAttribute('inputmode', config.inputMode);
      const max = Number(c.maxLength);
      if (Number.isInteger(max) && max > 0 && max <= 10000) input.setAttribute('maxlength', String(max));
    }
    input.setAttribute('aria-required', 'true'); // every mounted field is needed to tokenize
    update();
  }

  window.addEventListener('message', (ev) => {
    const d = ev.data;
    if (!d || typeof d !== 'object' || d.protocol !== PROTOCOL || d.instance !== instance) return;
    if (ev.source === window.parent && ev.origin === parentOrigin) {
      // The embedding page (frame-ancestors made sure it is one of the
      // application's allowed origins, and this one).
      try {
        switch (d.type) {
          case 'config': configure(d.config ?? {}); toParent({ type: 'configured' }); break;
          case 'focus': input.focus(); break;
          case 'blur': input.blur(); break;
          case 'clear': input.value = ''; update(); break;
        }
      } catch (e) {
        toParent({ type: 'change', empty: true, complete: false, error: 'The field could not be set up: ' + String(e.message).slice(0, 200) });
      }
      return;
    }
    if (ev.origin !== location.origin || ev.source === window || !ev.source) return;
    // A sibling frame of the vault's origin, of this instance.
    if (d.type === 'brand' && typeof d.brand === 'string') {
      sibling.brand = d.brand;
      if (kind === 'card-cvc') update();
    } else if (d.type === 'collect') {
      const r = k.check();
      ev.source.postMessage({ protocol: PROTOCOL, instance, type: 'value', id: d.id, kind,
        name: config?.name, complete: r.complete, empty: r.empty, error: r.error ?? (r.complete ? undefined : 'incomplete'),
        value: r.complete ? k.value() : undefined }, location.origin);
    }
  });

  toParent({ type: 'ready', height: height() });
})();
