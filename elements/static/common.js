// common.js: what the merchant's script (elements.js, which the server
// builds from this file and merchant.js) and the frames share: the
// protocol's name, the styling rules, and card arithmetic. A classic
// script: its one binding, tvCommon, is the frames' global and lives
// inside elements.js's closure on a merchant's page.
'use strict';
const tvCommon = (() => {
  // Every message of the elements carries protocol: PROTOCOL and the
  // instance id the merchant's script drew for its set of frames.
  const PROTOCOL = 'tokenvault-elements-v1';

  // Styling: the only properties a merchant may set, per state, and the
  // CSS property each becomes. Values are checked by styleValue, then set
  // through the CSSOM (style.setProperty), never written into CSS text.
  const STYLE_PROPERTIES = {
    color: 'color',
    backgroundColor: 'background-color',
    fontFamily: 'font-family',
    fontSize: 'font-size',
    fontWeight: 'font-weight',
    fontStyle: 'font-style',
    letterSpacing: 'letter-spacing',
    lineHeight: 'line-height',
    padding: 'padding',
    textAlign: 'text-align',
    placeholderColor: 'color', // of ::placeholder
  };
  const STYLE_STATES = ['base', 'focus', 'invalid', 'complete'];

  // A value may hold letters, digits, spaces, and . , % # ( ) - + ' " and
  // /: enough for colours (rgb(), #hex), lengths, font stacks and
  // weights; never url(, expression(, image-set(, braces, semicolons,
  // backslashes, angle brackets, @ or comments.
  const VALUE = /^[A-Za-z0-9 .,%#()\-+'"/]*$/;
  const FORBIDDEN = /url\s*\(|expression\s*\(|image(-set)?\s*\(|element\s*\(|attr\s*\(|var\s*\(|env\s*\(|\/\*|javascript:/i;

  function styleValue(state, prop, value) {
    if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
    if (typeof value !== 'string') throw new TypeError(`style.${state}.${prop}: must be a string`);
    if (value.length > 200 || !VALUE.test(value) || FORBIDDEN.test(value)) {
      throw new TypeError(`style.${state}.${prop}: ${JSON.stringify(value.slice(0, 40))} is not allowed (no url(), expression(), braces, semicolons, backslashes, angle brackets or comments)`);
    }
    return value;
  }

  // checkStyle returns a copy of style holding only known states and
  // properties with allowed values, or throws a TypeError naming the
  // first that is not.
  function checkStyle(style) {
    const out = {};
    if (style === undefined || style === null) return out;
    if (typeof style !== 'object' || Array.isArray(style)) throw new TypeError('style: must be an object of states (base, focus, invalid, complete)');
    for (const state of Object.keys(style)) {
      if (!STYLE_STATES.includes(state)) throw new TypeError(`style.${state}: unknown state (base, focus, invalid, complete)`);
      const props = style[state];
      if (typeof props !== 'object' || props === null || Array.isArray(props)) throw new TypeError(`style.${state}: must be an object`);
      out[state] = {};
      for (const prop of Object.keys(props)) {
        if (!Object.prototype.hasOwnProperty.call(STYLE_PROPERTIES, prop)) {
          throw new TypeError(`style.${state}.${prop}: not a property elements may set (${Object.keys(STYLE_PROPERTIES).join(', ')})`);
        }
        out[state][prop] = styleValue(state, prop, props[prop]);
      }
    }
    return out;
  }

  // Text options (labels, placeholders) are text: set with textContent or
  // as attributes, never parsed; they are bounded and control-free.
  function checkText(name, value, max = 200) {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f\u007f-\u009f]/.test(value)) {
      throw new TypeError(`${name}: must be a string of at most ${max} characters without control characters`);
    }
    return value;
  }

  // Card brands by prefix ranges, as the vault names them (internal/intents
  // card.go, in the same order: narrower ranges first).
  const BRAND_RANGES = [
    ['401178', '401179', 'elo'], ['431274', '431274', 'elo'], ['438935', '438935', 'elo'],
    ['451416', '451416', 'elo'], ['457393', '457393', 'elo'], ['457631', '457632', 'elo'],
    ['504175', '504175', 'elo'], ['506699', '506778', 'elo'], ['509000', '509999', 'elo'],
    ['627780', '627780', 'elo'], ['636297', '636297', 'elo'], ['636368', '636368', 'elo'],
    ['650031', '650033', 'elo'], ['650035', '650051', 'elo'], ['650405', '650439', 'elo'],
    ['650485', '650538', 'elo'], ['650541', '650598', 'elo'], ['650700', '650718', 'elo'],
    ['650720', '650727', 'elo'], ['650901', '650978', 'elo'], ['651652', '651679', 'elo'],
    ['655000', '655019', 'elo'], ['655021', '655058', 'elo'],
    ['622126', '622925', 'discover'],
    ['2200', '2204', 'mir'],
    ['2221', '2720', 'mastercard'],
    ['300', '305', 'diners'], ['3095', '3095', 'diners'], ['36', '36', 'diners'], ['38', '39', 'diners'],
    ['34', '34', 'amex'], ['37', '37', 'amex'],
    ['3528', '3589', 'jcb'],
    ['4', '4', 'visa'],
    ['51', '55', 'mastercard'],
    ['5018', '5018', 'maestro'], ['5020', '5020', 'maestro'], ['5038', '5038', 'maestro'],
    ['5893', '5893', 'maestro'], ['6304', '6304', 'maestro'], ['6759', '6759', 'maestro'],
    ['6761', '6763', 'maestro'],
    ['6011', '6011', 'discover'], ['644', '649', 'discover'], ['65', '65', 'discover'],
    ['62', '62', 'unionpay'], ['81', '81', 'unionpay'],
  ];

  // brand names the network of digits (a prefix is enough), or 'unknown'.
  function brand(digits) {
    for (const [lo, hi, name] of BRAND_RANGES) {
      if (digits.length < lo.length) continue;
      const p = digits.slice(0, lo.length);
      if (p >= lo && p <= hi) return name;
    }
    return 'unknown';
  }

  // Lengths a brand's numbers have, and where their groups break.
  function cardLayout(b) {
    switch (b) {
      case 'amex': return { lengths: [15], groups: [4, 6, 5], cvc: 4 };
      case 'diners': return { lengths: [14, 16, 19], groups: [4, 6, 4], cvc: 3 };
      default: return { lengths: [16, 17, 18, 19], groups: [4, 4, 4, 4, 3], cvc: 3 };
    }
  }

  function luhn(digits) {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = digits.charCodeAt(digits.length - 1 - i) - 48;
      if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
      sum += d;
    }
    return digits.length > 0 && sum % 10 === 0;
  }

  // formatCard spaces digits into the brand's groups.
  function formatCard(digits) {
    const { groups } = cardLayout(brand(digits));
    const parts = [];
    let i = 0;
    for (const g of groups) {
      if (i >= digits.length) break;
      parts.push(digits.slice(i, i + g));
      i += g;
    }
    if (i < digits.length) parts.push(digits.slice(i));
    return parts.join(' ');
  }

  // What a page may put in a request besides the fields' data: nothing
  // that computes over the data (id, mask, search_indexes,
  // fingerprint_expression: an expression could carry part of the card
  // into the id the page is answered), nor deduplication (its answer
  // would tell the page whether a card is stored).
  const REQUEST_FIELDS = {
    tokenize: ['type', 'containers', 'metadata', 'expires_at', 'field'],
    intent: ['type', 'expires_at', 'field'],
  };

  // checkRequest throws a TypeError naming the first field of request
  // that op does not take.
  function checkRequest(op, request) {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) throw new TypeError(`${op}: the request must be an object`);
    if (typeof request.type !== 'string' || request.type === '') throw new TypeError(`${op}: type is required (card, or token with a text field)`);
    for (const k of Object.keys(request)) {
      if (!REQUEST_FIELDS[op].includes(k)) {
        throw new TypeError(`${op}: ${k} is not taken (${REQUEST_FIELDS[op].join(', ')}): ` +
          (k === 'data' ? 'the data comes from the fields' : 'a page may not compute over the data it does not see'));
      }
    }
  }

  return { PROTOCOL, checkRequest, STYLE_PROPERTIES, STYLE_STATES, checkStyle, checkText, brand, cardLayout, luhn, formatCard };
})();
