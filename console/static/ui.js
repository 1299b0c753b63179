// ui.js: the few widgets every page uses (labelled fields, errors beside
// their fields, tables, cursor pagers, code editors), built with dom.js.
import { h, clear, uid, fieldOf, lineNumbers, localTime } from './dom.js';

// field is a labelled control: input is an element (input, select,
// textarea) that gets an id; name is the request field whose errors are
// shown under it.
export function field(label, input, name, hint) {
  const id = input.id || uid(name || 'f');
  input.id = id;
  const errId = `${id}-error`;
  input.setAttribute('aria-describedby', errId);
  return h('div', { class: 'field' },
    h('label', { for: id, text: label }),
    input,
    hint ? h('span', { class: 'muted', text: hint }) : null,
    h('div', { class: 'field-error', id: errId, 'data-error-for': name || '', role: 'alert' }));
}

// codeEditor is a textarea with a line-number gutter that follows its
// text and scrolling.
export function codeEditor(props) {
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true', text: '1' });
  const ta = h('textarea', { spellcheck: 'false', wrap: 'off', ...props });
  const sync = () => {
    gutter.textContent = lineNumbers(ta.value);
    gutter.scrollTop = ta.scrollTop;
  };
  ta.addEventListener('input', sync);
  ta.addEventListener('scroll', () => { gutter.scrollTop = ta.scrollTop; });
  ta.setValue = (v) => { ta.value = v; sync(); };
  sync();
  const wrap = h('div', { class: 'editor' }, gutter, ta);
  wrap.textarea = ta;
  wrap.gutter = gutter;
  return wrap;
}

// formError is the box of a form's error detail (and of field errors with
// no field of their own).
export function formError() {
  return h('div', { class: 'form-error', role: 'alert' });
}

// clearErrors empties the error boxes within root.
export function clearErrors(root) {
  for (const el of root.querySelectorAll('.field-error, .form-error')) clear(el);
}

// showError shows err in root: its detail in root's .form-error, each of
// its field errors beside the field it names (data-error-for), or in the
// .form-error box when no field has that name.
export function showError(root, err) {
  clearErrors(root);
  const box = root.querySelector('.form-error');
  const detail = err && (err.detail || err.message) ? (err.detail || err.message) : String(err);
  if (box) box.append(h('div', { class: 'detail', text: detail }));
  const errors = (err && err.errors) || {};
  if (err && err.field && !Object.keys(errors).length) {
    const el = errorSlot(root, err.field);
    if (el) el.append(h('div', { text: err.message }));
  }
  for (const [path, msgs] of Object.entries(errors)) {
    const text = `${path}: ${[msgs].flat().join('; ')}`;
    const el = errorSlot(root, fieldOf(path));
    (el || box)?.append(h('div', { text }));
  }
}

// errorSlot is the error box of the field named name within root: the
// first one shown, when several fields (one of them hidden) share a name.
function errorSlot(root, name) {
  if (!name) return null;
  const all = [...root.querySelectorAll(`[data-error-for="${CSS.escape(name)}"]`)];
  return all.find((el) => !el.closest('[hidden]')) || all[0] || null;
}

// table renders rows (objects) with columns [{label, value(row) -> node or
// text}]; empty shows a line saying so.
export function table(columns, rows, empty) {
  if (!rows.length) return h('p', { class: 'muted', text: empty || 'Nothing here yet.' });
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', text: c.label })))),
    h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', {}, c.value(r))))))));
}

// Pager walks a list by cursor: load(start) fetches one page; next() uses
// the page's pagination.after as start, prev() goes back to the cursor of
// the page before. Its element shows the page number, the total and the
// buttons.
export class Pager {
  // exact: the list keeps a count, so pagination.total_items is the
  // whole list's; logs and token lists may answer a lower bound instead
  // (the lines up to this page's end, and one more while after is set),
  // shown as "at least".
  constructor(load, render, idPrefix, exact = true) {
    this.exact = exact;
    this.load = load;
    this.render = render;
    this.stack = [];
    this.start = '';
    this.page = null;
    const p = idPrefix || uid('pager');
    this.prevBtn = h('button', { type: 'button', id: `${p}-prev`, onclick: () => guard(this.el, () => this.prev()) }, 'Previous page');
    this.nextBtn = h('button', { type: 'button', id: `${p}-next`, onclick: () => guard(this.el, () => this.next()) }, 'Next page');
    this.info = h('span', { class: 'muted', id: `${p}-info`, 'aria-live': 'polite' });
    this.el = h('div', { class: 'pager' }, this.prevBtn, this.nextBtn, this.info, formError());
  }

  async reload() {
    this.stack = [];
    this.start = '';
    return this.fetch();
  }

  // fetch loads the page at the cursor and shows it. Only the latest
  // fetch shows its page: one still in flight when another starts (a
  // page's own refresh while the user pages on) is dropped, so the rows
  // shown always match the cursor and the page number.
  async fetch() {
    const seq = this.seq = (this.seq || 0) + 1;
    let page;
    try {
      page = await this.load(this.start);
    } catch (e) {
      if (seq !== this.seq) return this.page;
      this.prevBtn.disabled = true;
      this.nextBtn.disabled = true;
      this.info.textContent = '';
      throw e;
    }
    if (seq !== this.seq) return this.page;
    this.page = page;
    const pg = this.page.pagination || {};
    this.prevBtn.disabled = this.stack.length === 0;
    this.nextBtn.disabled = !pg.after;
    const n = this.stack.length + 1;
    const total = pg.total_items ?? this.page.data.length;
    this.info.textContent = this.exact || !pg.after
      ? `Page ${n}${pg.total_pages ? ` of ${pg.total_pages}` : ''} · ${total} in all`
      : `Page ${n} · at least ${total}`;
    this.render(this.page.data || []);
    return this.page;
  }

  async next() {
    const after = this.page && this.page.pagination && this.page.pagination.after;
    if (!after) return;
    this.stack.push(this.start);
    this.start = after;
    await this.fetch();
  }

  async prev() {
    if (!this.stack.length) return;
    this.start = this.stack.pop();
    await this.fetch();
  }
}

// guard runs fn, showing a failure in root's error box instead of
// throwing; it resolves to fn's result or undefined.
export async function guard(root, fn) {
  clearErrors(root);
  try {
    return await fn();
  } catch (e) {
    showError(root, e);
    return undefined;
  }
}

// confirmButton is a button that asks for a second click before it acts
// (no window.confirm: it blocks the page and automated browsers).
export function confirmButton(label, confirmLabel, action, props) {
  const b = h('button', { type: 'button', class: 'danger', ...props }, label);
  let armed = false;
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      b.textContent = confirmLabel;
      return;
    }
    b.disabled = true;
    try {
      await action();
    } finally {
      b.disabled = false;
      armed = false;
      b.textContent = label;
    }
  });
  b.addEventListener('blur', () => { armed = false; b.textContent = label; });
  return b;
}

// shortId shows the start of an id, the whole in its title.
export function shortId(id) {
  return h('code', { title: id, text: String(id) });
}

// timeCell shows an RFC 3339 time as local time to the second with its
// zone, the exact UTC time in its title.
export function timeCell(iso) {
  return h('time', { datetime: iso, title: `${iso} (UTC)`, text: localTime(iso) });
}

// operationCell shows an audit line's operation; a denied request's
// carries a "denied" badge (its operation is "denied", shown once).
export function operationCell(line) {
  if (line.outcome !== 'denied') return line.operation;
  return h('span', {}, line.operation === 'denied' ? '' : line.operation,
    h('span', { class: 'badge denied', title: 'a request refused for its key', text: 'denied' }));
}
