// dom.js builds elements from data without ever parsing HTML: strings
// become text nodes, so tenant-supplied text (names, metadata, code, error
// details) can never turn into markup. Nothing in the console uses
// innerHTML, insertAdjacentHTML or document.write.

// h(tag, props, ...children) makes an element. props: class, text, and
// any attribute; a key starting with "on" must be a function and becomes
// an event listener (never an inline handler attribute). children: nodes,
// strings (as text), numbers, arrays of these; null and false are skipped.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) {
      if (typeof v !== 'function') throw new TypeError(`${k} must be a function`);
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'value') {
      el.value = String(v);
    } else if (k === 'checked' || k === 'disabled' || k === 'hidden' || k === 'selected') {
      el[k] = Boolean(v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// append adds children to el as h does.
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// clear removes every child of el.
export function clear(el) {
  el.replaceChildren();
  return el;
}

let ids = 0;
// uid returns an id no other element of the page has.
export function uid(prefix) {
  ids++;
  return `${prefix || 'f'}-${ids}`;
}

// pretty is v as indented JSON text (for <pre>, set as textContent).
export function pretty(v) {
  return v === undefined ? '' : JSON.stringify(v, null, 2);
}

// jsonLines is items as JSON lines: one compact JSON value a line, each
// line ended by a newline (empty for no items).
export function jsonLines(items) {
  return items.map((it) => JSON.stringify(it) + '\n').join('');
}

// lineNumbers is the gutter text for code: "1\n2\n...\nN", one number for
// each line of text (an empty text has one line).
export function lineNumbers(text) {
  const n = String(text).split('\n').length;
  return Array.from({ length: n }, (_, i) => String(i + 1)).join('\n');
}

// fieldOf is the request field a problem's error path names: its first
// segment ("rules[0].container" and "rules.0" are "rules", "name" is
// "name"); "" for an empty path.
export function fieldOf(path) {
  const m = /^[^.[]*/.exec(String(path));
  return m ? m[0] : '';
}

// parsePairs reads "key=value" lines into an object; blank lines are
// skipped; a line without "=" throws, naming its line number.
export function parsePairs(text) {
  const out = {};
  String(text).split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const eq = line.indexOf('=');
    if (eq < 1) throw new Error(`line ${i + 1}: want key=value`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  });
  return out;
}

// parseJSON parses text as JSON, with empty text as fallback; a syntax
// error throws an Error whose message names the field.
export function parseJSON(text, field, fallback) {
  if (String(text).trim() === '') return fallback;
  try {
    return JSON.parse(text);
  } catch (e) {
    const err = new Error(`${field}: not valid JSON (${e.message})`);
    err.field = field;
    throw err;
  }
}

// isoDate is the value of a datetime-local input as an ISO 8601 UTC time,
// "" for an empty value; a value that is not a date throws.
export function isoDate(local) {
  if (!local) return '';
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) throw new Error(`not a date: ${local}`);
  return d.toISOString();
}

// download offers text as a file named name, through a Blob URL (no
// server round trip: the data is what the page already holds).
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type: type || 'application/octet-stream' }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

const pad = (n) => String(n).padStart(2, '0');

// localTime is an RFC 3339 time as the browser's local time, to the
// second, with its zone ("2026-11-29 23:01:05 GMT+1"); text that is not a
// time is returned as it is.
export function localTime(iso) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return String(iso ?? '');
  const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
  return `${localInput(d.toISOString())} ${zone ? zone.value : ''}`.trim().replace('T', ' ');
}

// localInput is an RFC 3339 time as the value of a datetime-local input
// with seconds ("2026-11-29T23:01:05", local time), "" for an empty or
// invalid time: the reverse of isoDate, to the second.
export function localInput(iso) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// hashParams are the parameters after "?" in a location hash
// ("#/logs?outcome=denied"), as an object of strings.
export function hashParams(hash) {
  const i = String(hash).indexOf('?');
  return i < 0 ? {} : Object.fromEntries(new URLSearchParams(String(hash).slice(i + 1)));
}
