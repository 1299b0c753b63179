// rules.js: the access rules of an application, built in a form (a row
// per rule: priority, container, transform, token permissions, purposes,
// description; add, remove, move) or edited as JSON, the two kept in sync.
// The JSON is what the API takes (AccessRule); a rule's fields the form
// has no control for (conditions, which are for sessions) are kept as
// they are.
import { h, clear, uid } from './dom.js';

export const transforms = ['reveal', 'mask', 'redact'];

// splitList reads "a, b c" into ["a", "b", "c"].
export function splitList(text) {
  return String(text).split(/[\s,]+/).filter(Boolean);
}

// parseRules reads the JSON text of a list of rules. Empty text is no
// rule; text that is not JSON, or not an array of objects, throws an
// Error naming the field "rules" and saying what is wrong.
export function parseRules(text) {
  if (String(text).trim() === '') return [];
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw rulesError(`not valid JSON (${e.message}); the form keeps the rules it had`);
  }
  if (!Array.isArray(v)) throw rulesError('must be a JSON array of rules, [] for none');
  v.forEach((r, i) => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw rulesError(`rule ${i + 1} must be a JSON object`);
  });
  return v;
}

function rulesError(msg) {
  const err = new Error(`rules: ${msg}`);
  err.field = 'rules';
  return err;
}

// renumber sets the priorities of rules to 1..n in their order.
export function renumber(rules) {
  return rules.map((r, i) => ({ ...r, priority: i + 1 }));
}

// byPriority is rules sorted by priority, the order the vault reads them
// in (a rule without a number last).
export function byPriority(rules) {
  const p = (r) => (Number.isInteger(r.priority) ? r.priority : Infinity);
  return [...rules].sort((a, b) => p(a) - p(b));
}

// rulesEditor is the widget. textarea is the JSON view (its id and name
// are the callers'); tokenPermissions() lists the permissions a rule may
// grant for the chosen application type. onChange runs after any edit.
export function rulesEditor(textarea, onChange = () => {}) {
  let rules = [];
  let permissions = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:search', 'token:use'];
  let asJSON = false;
  const rows = h('div', { id: 'rule-rows', class: 'rule-rows' });
  const add = h('button', { type: 'button', id: 'rule-add' }, 'Add rule');
  const form = h('div', { id: 'rules-form' }, rows, h('div', { class: 'actions' }, add));
  const error = h('div', { class: 'field-error', id: 'rules-json-error', role: 'alert' });
  const jsonView = h('div', { id: 'rules-json', hidden: true }, textarea, error);
  const mode = h('button', { type: 'button', id: 'rules-mode', 'aria-pressed': 'false' }, 'Edit as JSON');
  const el = h('fieldset', { id: 'app-rules-editor', class: 'rules' },
    h('legend', { text: 'Access rules (the first by priority that matches a token and grants the permission decides)' }),
    form, jsonView, h('div', { class: 'actions' }, mode),
    h('div', { class: 'field-error', 'data-error-for': 'rules', role: 'alert' }));

  const changed = () => {
    textarea.value = rules.length ? JSON.stringify(rules, null, 1) : '';
    onChange();
  };

  function render() {
    clear(rows);
    if (!rules.length) rows.append(h('p', { class: 'muted', id: 'rules-none', text: 'No access rule: only the permissions checked above.' }));
    rules.forEach((r, i) => rows.append(ruleRow(r, i)));
  }

  function ruleRow(r, i) {
    const n = i + 1;
    const id = uid(`rule-${n}`);
    const set = (k, v) => {
      rules[i] = { ...rules[i], [k]: v };
      if (v === undefined || (Array.isArray(v) && !v.length && k !== 'permissions')) delete rules[i][k];
      changed();
    };
    const labelled = (label, input, cls = 'field') => h('div', { class: cls }, h('label', { for: input.id, text: label }), input);
    const priority = h('input', { id: `${id}-priority`, type: 'number', min: 1, step: 1, value: r.priority ?? '', class: 'rule-priority' });
    priority.addEventListener('change', () => set('priority', priority.value === '' ? undefined : Number(priority.value)));
    const container = h('input', { id: `${id}-container`, value: r.container ?? '', placeholder: '/pci/', class: 'rule-container' });
    container.addEventListener('input', () => set('container', container.value || undefined));
    const transform = h('select', { id: `${id}-transform`, class: 'rule-transform' },
      transforms.map((t) => h('option', { value: t, text: t, selected: (r.transform || 'redact') === t })));
    transform.addEventListener('change', () => set('transform', transform.value));
    const purposes = h('input', { id: `${id}-purposes`, value: (r.purposes || []).join(', '), placeholder: 'any purpose', class: 'rule-purposes' });
    purposes.addEventListener('input', () => set('purposes', splitList(purposes.value)));
    const description = h('input', { id: `${id}-description`, value: r.description ?? '', class: 'rule-description' });
    description.addEventListener('input', () => set('description', description.value || undefined));
    const held = new Set(r.permissions || []);
    const perms = h('fieldset', { class: 'rule-permissions' }, h('legend', { text: 'Permissions' }),
      [...new Set([...permissions, ...held])].map((p) => {
        const cb = h('input', { type: 'checkbox', id: `${id}-perm-${p.replaceAll(':', '-')}`, value: p, checked: held.has(p) });
        cb.addEventListener('change', () => set('permissions', [...perms.querySelectorAll('input:checked')].map((c) => c.value)));
        return h('label', { class: 'check' }, cb, ` ${p}`);
      }));
    const move = (to) => {
      const next = [...rules];
      [next[i], next[to]] = [next[to], next[i]];
      rules = renumber(next);
      render();
      changed();
    };
    const up = h('button', { type: 'button', 'data-action': 'rule-up', 'aria-label': `Move rule ${n} up`, disabled: i === 0 }, 'Up');
    up.addEventListener('click', () => move(i - 1));
    const down = h('button', { type: 'button', 'data-action': 'rule-down', 'aria-label': `Move rule ${n} down`, disabled: i === rules.length - 1 }, 'Down');
    down.addEventListener('click', () => move(i + 1));
    const remove = h('button', { type: 'button', class: 'danger', 'data-action': 'rule-remove', 'aria-label': `Remove rule ${n}` }, 'Remove');
    remove.addEventListener('click', () => {
      rules = rules.filter((_, j) => j !== i);
      render();
      changed();
    });
    const extra = r.conditions ? h('p', { class: 'muted', text: 'Conditions (for sessions) are kept as the JSON has them.' }) : null;
    return h('div', { class: 'rule', 'data-rule': n },
      h('div', { class: 'row' },
        labelled(`Rule ${n}: priority`, priority, 'field narrow'),
        labelled('Container', container),
        labelled('Transform', transform, 'field narrow'),
        labelled('Purposes (optional)', purposes),
        labelled('Description (optional)', description)),
      perms, extra,
      h('div', { class: 'actions' }, up, down, remove));
  }

  add.addEventListener('click', () => {
    const top = rules.reduce((m, r) => (Number.isInteger(r.priority) && r.priority > m ? r.priority : m), 0);
    rules = [...rules, { priority: top + 1, container: '/', transform: 'mask', permissions: [] }];
    render();
    changed();
    rows.querySelector(`[data-rule="${rules.length}"] .rule-container`)?.focus();
  });

  // fromJSON reads the JSON view into the form; bad JSON is refused with
  // its message beside the text, and the form keeps what it had.
  function fromJSON() {
    try {
      rules = byPriority(parseRules(textarea.value));
      error.textContent = '';
      render();
      return true;
    } catch (e) {
      error.textContent = e.message;
      return false;
    }
  }
  textarea.addEventListener('input', () => { if (fromJSON()) onChange(); });

  mode.addEventListener('click', () => {
    if (asJSON && !fromJSON()) {
      textarea.focus();
      return;
    }
    if (!asJSON) changed();
    asJSON = !asJSON;
    form.hidden = asJSON;
    jsonView.hidden = !asJSON;
    mode.textContent = asJSON ? 'Edit as form' : 'Edit as JSON';
    mode.setAttribute('aria-pressed', String(asJSON));
  });

  return {
    el,
    // value is the rules to send: the JSON view's when it is shown
    // (throwing on bad JSON), else the form's.
    value() {
      return asJSON ? parseRules(textarea.value) : rules.map((r) => ({ ...r }));
    },
    set(list) {
      rules = byPriority(list || []);
      error.textContent = '';
      render();
      textarea.value = rules.length ? JSON.stringify(rules, null, 1) : '';
    },
    setPermissions(list) {
      permissions = list;
      render();
    },
  };
}
