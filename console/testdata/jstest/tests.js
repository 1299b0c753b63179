// Unit tests of the console's modules, run in the browser by
// TestConsoleJavaScript (browser_test.go): each test is a function that
// throws on failure; the results are left in window.testResults and
// document.body's data-done.
import { h, jsonLines, lineNumbers, fieldOf, parsePairs, parseJSON, isoDate, pretty, localTime, localInput, hashParams } from '/console/dom.js';
import { actorCell } from '/console/actors.js';
import { ApiError, api, query, problemOf, onUnauthorized } from '/console/api.js';
import { getKey, signIn, signOut, storageName } from '/console/session.js';
import { showError, Pager, field, formError, codeEditor } from '/console/ui.js';
import { eventsLabel, webhookBody } from '/console/pages/webhooks.js';
import { parseRules, renumber, byPriority, splitList, rulesEditor } from '/console/rules.js';

const tests = {};
function eq(got, want, what) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

tests.hMakesTextNotMarkup = () => {
  window.planted = false;
  const payload = '<img src=x onerror="window.planted=true">';
  const el = h('div', { title: payload }, payload, ['a', 1, null, false]);
  eq(el.childNodes.length, 3, 'children');
  eq(el.textContent, `${payload}a1`, 'text');
  eq(el.querySelectorAll('img').length, 0, 'img elements');
  eq(el.getAttribute('title'), payload, 'attribute');
};
tests.hRefusesStringHandlers = () => {
  let threw = false;
  try { h('button', { onclick: 'alert(1)' }); } catch { threw = true; }
  eq(threw, true, 'string onclick refused');
  let clicked = 0;
  h('button', { onclick: () => { clicked++; } }).click();
  eq(clicked, 1, 'function onclick');
};
tests.jsonLines = () => {
  eq(jsonLines([]), '', 'empty');
  eq(jsonLines([{ a: 1 }, { b: 'x\ny' }]), '{"a":1}\n{"b":"x\\ny"}\n', 'two lines');
  const back = jsonLines([{ a: 1 }, { b: 2 }]).trim().split('\n').map((l) => JSON.parse(l));
  eq(back, [{ a: 1 }, { b: 2 }], 'round trip');
};
tests.lineNumbers = () => {
  eq(lineNumbers(''), '1', 'empty');
  eq(lineNumbers('a\nb\n'), '1\n2\n3', 'trailing newline');
};
tests.fieldOf = () => {
  eq(fieldOf('rules[0].container'), 'rules', 'index');
  eq(fieldOf('configuration.tz'), 'configuration', 'dot');
  eq(fieldOf('name'), 'name', 'plain');
  eq(fieldOf(''), '', 'empty');
};
tests.parsePairs = () => {
  eq(parsePairs('a=1\n\n b = x=y '), { a: '1', b: 'x=y' }, 'pairs');
  let msg = '';
  try { parsePairs('a=1\nnope'); } catch (e) { msg = e.message; }
  eq(msg, 'line 2: want key=value', 'bad line');
};
tests.parseJSON = () => {
  eq(parseJSON('  ', 'f', 7), 7, 'fallback');
  eq(parseJSON('{"a":[1]}', 'f'), { a: [1] }, 'object');
  let err;
  try { parseJSON('{', 'rules'); } catch (e) { err = e; }
  eq(err.field, 'rules', 'field of the syntax error');
};
tests.isoDate = () => {
  eq(isoDate(''), '', 'empty');
  eq(isoDate('2026-01-02T03:04'), new Date('2026-01-02T03:04').toISOString(), 'local time');
};
tests.localTimes = () => {
  const iso = '2026-01-02T03:04:05.123456789Z';
  const back = localInput(iso);
  eq(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(back), true, `datetime-local value ${back}`);
  eq(isoDate(back), '2026-01-02T03:04:05.000Z', 'round trip to the second');
  eq(localInput(''), '', 'empty');
  eq(localInput('not a time'), '', 'not a time');
  const shown = localTime(iso);
  eq(shown.startsWith(back.replace('T', ' ')), true, `local time ${shown}`);
  eq(shown.length > back.length, true, `zone shown in ${shown}`);
  eq(localTime('soon'), 'soon', 'not a time kept');
};
tests.hashParams = () => {
  eq(hashParams('#/logs'), {}, 'none');
  eq(hashParams('#/logs?outcome=denied&actor_id=a%20b'), { outcome: 'denied', actor_id: 'a b' }, 'two');
};
tests.actorCell = () => {
  const dir = { apps: new Map([['a1', { id: 'a1', name: '<b>shop</b>', type: 'private' }]]) };
  const app = actorCell(dir, { actor_type: 'application', actor_id: 'a1' });
  eq([app.textContent, app.title, app.querySelectorAll('b').length], ['<b>shop</b> (private application)', 'a1', 0], 'an application by name');
  eq(actorCell(dir, { actor_type: 'application', actor_id: 'a2' }).textContent, 'application a2', 'an application not read');
  eq(actorCell(dir, { actor_type: 'user', actor_id: 'u1' }).textContent, 'member u1', 'a member');
  eq(actorCell(null, { actor_type: 'session', actor_id: 's1' }).textContent, 'session s1', 'a session');
  eq(actorCell(dir, { actor_type: 'system' }).textContent, 'system', 'the system');
};
tests.pretty = () => eq(pretty({ a: 1 }), '{\n  "a": 1\n}', 'pretty');
tests.query = () => {
  eq(query({ a: '', b: null, c: 'x y', d: ['1', '2'] }), '?c=x+y&d=1&d=2', 'query');
  eq(query({}), '', 'none');
};
tests.problemOf = () => {
  eq(problemOf({ proxy_error: { detail: 'd' } }), { detail: 'd' }, 'proxy error');
  eq(problemOf({ detail: 'x' }), { detail: 'x' }, 'problem');
};
tests.apiError = () => {
  const e = new ApiError(400, { title: 'Bad Request', detail: 'bad', errors: { name: ['required'] } });
  eq([e.status, e.detail, e.errors], [400, 'bad', { name: ['required'] }], 'fields');
  eq(new ApiError(502, 'text').detail, 'HTTP 502', 'not a problem');
};
tests.session = () => {
  signIn('key-123');
  eq(getKey(), 'key-123', 'signed in');
  eq(sessionStorage.getItem(storageName), 'key-123', 'sessionStorage');
  eq(localStorage.length, 0, 'localStorage untouched');
  eq(document.cookie, '', 'no cookie');
  signOut();
  eq(getKey(), null, 'memory after sign-out');
  eq(sessionStorage.getItem(storageName), null, 'sessionStorage after sign-out');
};
tests.showErrorBesideFields = () => {
  const form = h('form', {}, field('Name', h('input', {}), 'name'), field('Rules', h('textarea', {}), 'rules'), formError());
  const payload = '<img src=x onerror="window.planted=true">';
  showError(form, new ApiError(400, { detail: payload, errors: { name: ['too long'], 'rules[0].priority': ['must be at least 1'], other: [payload] } }));
  eq(form.querySelector('[data-error-for=name]').textContent, 'name: too long', 'name error');
  eq(form.querySelector('[data-error-for=rules]').textContent, 'rules[0].priority: must be at least 1', 'rules error');
  eq(form.querySelector('.form-error').textContent, payload + 'other: ' + payload, 'detail and unplaced errors');
  eq(form.querySelectorAll('img').length, 0, 'no img');
  showError(form, new Error('plain'));
  eq(form.querySelector('[data-error-for=name]').textContent, '', 'cleared');
};
tests.codeEditorGutter = () => {
  const ed = codeEditor({});
  ed.textarea.value = 'a\nb\nc';
  ed.textarea.dispatchEvent(new Event('input'));
  eq(ed.gutter.textContent, '1\n2\n3', 'gutter');
  ed.textarea.setValue('x');
  eq(ed.gutter.textContent, '1', 'setValue');
};
tests.webhookEventsLabel = () => {
  eq(eventsLabel(['token.created']), 'token.created', 'one');
  eq(eventsLabel(['*', 'token.read']), '* (every event but the high-volume ones), token.read', 'star explained');
  eq(eventsLabel(undefined), '', 'none');
};
tests.webhookBodyKeepsFields = () => {
  const w = { id: 'x', name: 'n', url: 'https://r.example/h', events: ['*'], status: 'enabled', disabled_reason: 'gone', created_at: 't' };
  eq(webhookBody(w, { status: 'disabled' }), { name: 'n', url: 'https://r.example/h', events: ['*'], status: 'disabled' }, 'no notify_email');
  eq(webhookBody({ ...w, notify_email: 'a@b.example' }, {}).notify_email, 'a@b.example', 'notify_email kept');
};
tests.pagerDropsStaleFetches = async () => {
  const pages = { '': { data: ['first'], pagination: { after: 'c1' } }, c1: { data: ['second'], pagination: {} } };
  const pending = [];
  let shown = [];
  const p = new Pager((s) => new Promise((resolve) => pending.push(() => resolve(pages[s]))), (rows) => { shown = rows; }, 'stale');
  const first = p.reload();
  pending.shift()();
  await first;
  // A refresh of page 1 still in flight when the user goes to page 2,
  // answering after it: page 2 stays shown.
  const refresh = p.fetch();
  const next = p.next();
  const [refreshAnswer, nextAnswer] = pending.splice(0);
  nextAnswer();
  await next;
  refreshAnswer();
  await refresh;
  eq(shown, ['second'], 'rows shown');
  eq(p.info.textContent.startsWith('Page 2'), true, 'page number');
  eq(p.page.data, ['second'], 'page held');
};
tests.pagerFollowsCursor = async () => {
  const starts = [];
  const pages = { '': { data: [1], pagination: { total_items: 3, after: 'c1' } }, c1: { data: [2], pagination: { total_items: 3, after: 'c2' } }, c2: { data: [3], pagination: { total_items: 3 } } };
  let shown = [];
  const p = new Pager(async (s) => { starts.push(s); return pages[s]; }, (rows) => { shown = rows; });
  await p.reload();
  eq(p.info.textContent, 'Page 1 · 3 in all', 'exact total');
  const lb = new Pager(async (s) => pages[s], () => {}, 'lb', false);
  await lb.reload();
  eq(lb.info.textContent, 'Page 1 · at least 3', 'lower bound while after is set');
  await lb.next();
  await lb.next();
  eq(lb.info.textContent, 'Page 3 · 3 in all', 'exact on the last page');
  await p.next();
  await p.next();
  eq(shown, [3], 'last page');
  eq(p.nextBtn.disabled, true, 'no next on the last page');
  await p.prev();
  eq(shown, [2], 'back one');
  eq(starts, ['', 'c1', 'c2', 'c1'], 'cursors sent');
};
tests.apiSendsKeyAndReadsProblems = async () => {
  const seen = [];
  const real = window.fetch;
  window.fetch = async (url, init) => {
    seen.push([url, init.method, init.headers['SVC-API-KEY'], init.credentials]);
    return new Response(JSON.stringify({ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'nope', errors: { name: ['x'] } }), { status: 400, headers: { 'Content-Type': 'application/problem+json' } });
  };
  try {
    signIn('k1');
    let err;
    try { await api('POST', '/applications', { name: '' }); } catch (e) { err = e; }
    eq([err.status, err.detail, err.errors], [400, 'nope', { name: ['x'] }], 'problem');
    eq(seen, [['/applications', 'POST', 'k1', 'omit']], 'request');
  } finally {
    window.fetch = real;
    signOut();
  }
};
tests.unauthorizedSignsOut = async () => {
  const real = window.fetch;
  let calls = 0;
  window.fetch = async () => new Response('{"title":"Unauthorized","status":401}', { status: 401, headers: { 'Content-Type': 'application/problem+json' } });
  onUnauthorized(() => { calls++; });
  try {
    signIn('k2');
    await api('GET', '/tenants/self').catch(() => {});
    eq(calls, 1, 'the signed-in key refused');
    await api('GET', '/permissions', null, { key: 'typed-at-sign-in' }).catch(() => {});
    eq(calls, 1, 'a key being tried at sign-in is not the session');
  } finally {
    window.fetch = real;
    onUnauthorized(() => {});
    signOut();
  }
};
tests.parseRulesRefusesWhatIsNotRules = () => {
  eq(parseRules(''), [], 'empty text');
  eq(parseRules('[{"priority": 1}]'), [{ priority: 1 }], 'an array of objects');
  for (const [text, want] of [['[{', 'not valid JSON'], ['{"priority": 1}', 'must be a JSON array'], ['[1]', 'rule 1 must be a JSON object']]) {
    let err = null;
    try { parseRules(text); } catch (e) { err = e; }
    eq(Boolean(err && err.message.includes(want) && err.field === 'rules'), true, `${text} refused with "${want}"`);
  }
};
tests.rulesOrder = () => {
  eq(byPriority([{ priority: 3 }, {}, { priority: 1 }]), [{ priority: 1 }, { priority: 3 }, {}], 'by priority, none last');
  eq(renumber([{ priority: 5, container: '/a/' }, { priority: 2 }]), [{ priority: 1, container: '/a/' }, { priority: 2 }], 'renumbered');
  eq(splitList(' a, b  c,,'), ['a', 'b', 'c'], 'split');
};
tests.rulesEditorKeepsFormAndJSONInSync = () => {
  const ta = h('textarea', {});
  const ed = rulesEditor(ta);
  document.body.append(ed.el);
  try {
    ed.set([{ priority: 2, container: '/b/', transform: 'mask', permissions: ['token:read'] }, { priority: 1, container: '/a/', transform: 'reveal', permissions: ['token:use'], conditions: [] }]);
    eq(ed.value().map((r) => r.container), ['/a/', '/b/'], 'sorted by priority');
    eq(JSON.parse(ta.value).length, 2, 'JSON view written');
    ed.el.querySelector('#rule-add').click();
    eq(ed.value().length, 3, 'a rule added');
    eq(ed.value()[2].priority, 3, 'after the last');
    ed.el.querySelector('[data-rule="1"] [data-action="rule-down"]').click();
    eq(ed.value().map((r) => [r.container, r.priority]), [['/b/', 1], ['/a/', 2], ['/', 3]], 'moved down, renumbered');
    eq('conditions' in ed.value()[1], true, 'a field the form has no control for is kept');
    ed.el.querySelector('#rules-mode').click();
    ta.value = '[{';
    ta.dispatchEvent(new Event('input'));
    eq(ed.el.querySelector('#rules-json-error').textContent.includes('not valid JSON'), true, 'bad JSON said');
    ed.el.querySelector('#rules-mode').click();
    eq(ed.el.querySelector('#rules-json').hidden, false, 'the JSON view stays over bad JSON');
    ta.value = '[{"priority": 1, "container": "/z/", "transform": "redact", "permissions": ["token:delete"]}]';
    ta.dispatchEvent(new Event('input'));
    ed.el.querySelector('#rules-mode').click();
    eq(ed.el.querySelector('#rules-form').hidden, false, 'back to the form');
    eq(ed.el.querySelector('[data-rule="1"] .rule-container').value, '/z/', 'the form follows the JSON');
  } finally {
    ed.el.remove();
  }
};

const results = [];
for (const [name, fn] of Object.entries(tests)) {
  try {
    await fn();
    results.push({ name, pass: true });
  } catch (e) {
    results.push({ name, pass: false, error: String(e && e.message ? e.message : e) });
  }
}
if (window.planted) results.push({ name: 'nothingPlantedRan', pass: false, error: 'a planted handler ran' });
window.testResults = results;
document.getElementById('results').textContent = JSON.stringify(results, null, 2);
document.body.dataset.done = 'true';
