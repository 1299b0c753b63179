package jsrt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunResults(t *testing.T) {
	r := New(Options{})
	req := map[string]any{
		"args":          map[string]any{"a": 2.0, "card": map[string]any{"number": "4242"}, "list": []any{1.0, "x", nil, true}},
		"configuration": map[string]any{"k": "v"},
	}
	tests := []struct {
		name string
		code string
		want any
	}{
		{"sync", `module.exports = function (req) { return req.args.a + 1 }`, 3.0},
		{"async", `module.exports = async function (req) { return req.configuration.k }`, "v"},
		{"arrow", `module.exports = async (req) => ({raw: req.args})`, map[string]any{"raw": req["args"]}},
		{"await chain", `module.exports = async (req) => {
			const v = await Promise.resolve(5).then(x => x * 2).then(x => Promise.resolve(x + 1));
			const w = await new Promise(resolve => resolve(v * 2));
			return w }`, 22.0},
		{"promise returned by a sync function", `module.exports = (req) => Promise.resolve(1).then(x => [x, x + 1])`, []any{1.0, 2.0}},
		{"Promise.all", `module.exports = async () => Promise.all([1, Promise.resolve(2), (async () => 3)()])`, []any{1.0, 2.0, 3.0}},
		{"caught rejection", `module.exports = async () => { try { await Promise.reject(new Error('x')) } catch (e) { return e.message } }`, "x"},
		{"nested", `module.exports = () => ({a: {b: {c: [1, [2, {d: 'e'}]]}}, n: null, t: true, f: false})`,
			map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{1.0, []any{2.0, map[string]any{"d": "e"}}}}}, "n": nil, "t": true, "f": false}},
		{"numbers", `module.exports = () => [0, -1, 1.5, 2 ** 53, 1e21, -0, NaN, Infinity]`, []any{0.0, -1.0, 1.5, 9007199254740992.0, 1e21, 0.0, nil, nil}},
		{"undefined", `module.exports = async () => undefined`, nil},
		{"no return", `module.exports = async () => {}`, nil},
		{"null", `module.exports = () => null`, nil},
		{"undefined properties left out", `module.exports = () => ({u: undefined, a: [undefined], d: 1})`, map[string]any{"a": []any{nil}, "d": 1.0}},
		{"toJSON and Date", `module.exports = () => ({d: new Date(0), j: {toJSON(key) { return 'key:' + key }}})`, map[string]any{"d": "1970-01-01T00:00:00.000Z", "j": "key:j"}},
		{"boxed primitives", `module.exports = () => [new String('s'), new Number(1), new Boolean(false)]`, []any{"s", 1.0, false}},
		{"shared, not cyclic", `module.exports = () => { const x = {v: 1}; return [x, x, {x}] }`, []any{map[string]any{"v": 1.0}, map[string]any{"v": 1.0}, map[string]any{"x": map[string]any{"v": 1.0}}}},
		{"getters run", `module.exports = () => ({get g() { return 7 }})`, map[string]any{"g": 7.0}},
		{"class instance", `class P { constructor() { this.x = 1 } m() {} }; module.exports = () => new P()`, map[string]any{"x": 1.0}},
		{"Map exports as JSON does", `module.exports = () => new Map([[1, 2]])`, map[string]any{}},
		{"string with unicode", `module.exports = () => 'héllo ✓ 😀'`, "héllo ✓ 😀"},
		{"surrogate pairs and U+FFFD itself", `module.exports = () => ({'\ud83d\ude00': '\ud83d\ude00', '\ufffd': '\ufffd', b: new String('\ufffd')})`,
			map[string]any{"😀": "😀", "\ufffd": "\ufffd", "b": "\ufffd"}},
		{"req list", `module.exports = (req) => [Array.isArray(req.args.list), req.args.list.length, JSON.stringify(req.args.list)]`, []any{true, 4.0, `[1,"x",null,true]`}},
		{"this is undefined", `module.exports = function () { 'use strict'; return this === undefined }`, true},
		{"exports object", `exports.x = 1; module.exports = () => typeof exports`, "object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runOK(t, r, tc.code, req, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run(%q) mismatch (-want +got):\n%s", tc.code, diff)
			}
		})
	}
}

func TestRunResultNotJSON(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		code string
		want string
	}{
		{`module.exports = () => function () {}`, "result is a function, which is not JSON-compatible"},
		{`module.exports = () => ({raw: {cb() {}}})`, "result.raw.cb is a function, which is not JSON-compatible"},
		{`module.exports = () => ({a: [1, Symbol('s')]})`, "result.a[1] is a symbol, which is not JSON-compatible"},
		{`module.exports = () => ({n: 10n})`, "result.n is a BigInt, which is not JSON-compatible"},
		{`module.exports = () => { const a = {b: {}}; a.b.a = a; return a }`, "result.b.a is a reference to itself (a cycle), which is not JSON-compatible"},
		{`module.exports = () => { const a = []; a.push(a); return a }`, "result[0] is a reference to itself (a cycle), which is not JSON-compatible"},
		{`module.exports = () => { let o = {}; for (let i = 0; i < 1000; i++) o = {o}; return o }`, "is nested too deeply, which is not JSON-compatible"},
		// Lone surrogates would come out as U+FFFD (a key: left out): the
		// result is refused instead, naming where.
		{`module.exports = () => ({s: 'a\ud800'})`, "result.s is a string that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => ['\udc00x']`, "result[0] is a string that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => ({s: new String('\ude00\ud83d')})`, "result.s is a string that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => ({k: {['\udc00']: 1}})`, "result.k is an object with a key that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => ({'\ud800': 1, '\ufffd': 2})`, "result is an object with a key that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => new Proxy({'\ud800': 1}, {get: (t, k) => t[k]})`, "result is an object with a key that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
		{`module.exports = () => { Object.prototype['\ufffd'] = 'x'; Reflect.ownKeys = () => []; return {'\ud800': 1} }`, "result is an object with a key that is not valid Unicode (a lone surrogate), which is not JSON-compatible"},
	}
	for _, tc := range tests {
		e := runErr(t, r, tc.code, nil, nil)
		if e.Kind != RuntimeFailure || e.Status != 500 || e.Class != "" || !strings.HasSuffix(e.Message, tc.want) {
			t.Errorf("Run(%q) = %#v, want RuntimeFailure %q", tc.code, e, tc.want)
		}
	}

	// A getter or toJSON that throws while the result is exported is the
	// code throwing.
	e := runErr(t, r, `module.exports = () => ({get g() { throw new BadRequestError('from a getter') }})`, nil, nil)
	if e.Kind != Thrown || e.Class != "BadRequestError" || e.Message != "from a getter" {
		t.Errorf("throwing getter = %#v", e)
	}
}

func TestRunRequest(t *testing.T) {
	r := New(Options{})
	req := map[string]any{
		"args": map[string]any{
			"int":       7,
			"int64":     int64(1) << 40,
			"number":    json.Number("12.5"),
			"bignumber": json.Number("12345678901234567890"),
			"strings":   []string{"a", "b"},
			"headers":   map[string]string{"X-A": "1"},
			"__proto__": map[string]any{"polluted": true},
			"struct":    struct{ A int }{A: 1},
		},
		"client": "replaced by the client",
	}
	code := `module.exports = (req) => ({
		keys: Object.keys(req).sort(),
		int: req.args.int, int64: req.args.int64, number: req.args.number, big: typeof req.args.bignumber,
		strings: req.args.strings.join('+'), header: req.args.headers['X-A'],
		ownProto: Object.prototype.hasOwnProperty.call(req.args, '__proto__'),
		polluted: ({}).polluted === undefined && req.args.polluted === undefined,
		struct: req.args.struct.A,
		client: req.client,
	})`
	got := runOK(t, r, code, req, nil)
	want := map[string]any{
		"keys": []any{"args", "client"},
		"int":  7.0, "int64": float64(int64(1) << 40), "number": 12.5, "big": "number",
		"strings": "a+b", "header": "1", "ownProto": true, "polluted": true, "struct": 1.0,
		"client": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("req mismatch (-want +got):\n%s", diff)
	}

	// The code gets a copy: changing req changes nothing of the caller's.
	args := map[string]any{"list": []any{1.0}, "m": map[string]any{"k": "v"}}
	runOK(t, r, `module.exports = (req) => { req.args.list.push(2); req.args.m.k = 'changed'; req.args.added = 1 }`, map[string]any{"args": args}, nil)
	if diff := cmp.Diff(map[string]any{"list": []any{1.0}, "m": map[string]any{"k": "v"}}, args); diff != "" {
		t.Errorf("the code changed the caller's req (-want +got):\n%s", diff)
	}

	// A nil req is an empty one.
	if got := runOK(t, r, `module.exports = (req) => Object.keys(req)`, nil, nil); !cmp.Equal(got, []any{"client"}) {
		t.Errorf("nil req: keys = %v", got)
	}

	// A value that cannot be given to the code is a RuntimeFailure.
	_, err := r.Run(t.Context(), mustCompile(t, r, `module.exports = () => 1`), map[string]any{"f": func() {}}, Host{})
	if e, ok := err.(*Error); !ok || e.Kind != RuntimeFailure {
		t.Errorf("Run(req with a func) = %v, want RuntimeFailure", err)
	}
}

func TestRunModuleExportsChangedAtRunTime(t *testing.T) {
	r := New(Options{})
	// Compile sees a function; a later run of the module body does not.
	p := mustCompile(t, r, `globalThis.n = (globalThis.n || 0) + 1; module.exports = Math.random() < 2 ? () => 1 : 0`)
	if out, err := r.Run(t.Context(), p, nil, Host{}); err != nil || out != 1.0 {
		t.Errorf("Run = %v, %v", out, err)
	}
}

func TestTimersAndMicrotasks(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		code string
		want any
	}{
		{"setTimeout order", `module.exports = async () => {
			const out = [];
			setTimeout(() => out.push('b'), 2);
			setTimeout(() => out.push('a'), 1);
			setTimeout((x, y) => out.push(x + y), 1, 'c', 'd');
			clearTimeout(setTimeout(() => out.push('cleared'), 1));
			await new Promise(resolve => setTimeout(resolve, 5));
			return out }`, []any{"a", "cd", "b"}},
		{"setInterval", `module.exports = async () => {
			let n = 0;
			await new Promise(resolve => { const id = setInterval(() => { if (++n === 3) { clearInterval(id); resolve() } }, 1) });
			return n }`, 3.0},
		{"microtasks before timers", `module.exports = async () => {
			const out = [];
			setTimeout(() => out.push('timer'), 0);
			queueMicrotask(() => out.push('microtask'));
			Promise.resolve().then(() => out.push('then'));
			out.push('sync');
			await new Promise(resolve => setTimeout(resolve, 1));
			return out }`, []any{"sync", "microtask", "then", "timer"}},
		{"sync function ignores pending timers", `module.exports = () => { setTimeout(() => {}, 10000); return 'done' }`, "done"},
		{"atob and btoa", `module.exports = () => [btoa('hello'), atob('aGVsbG8='), atob(' aGVs bG8 ')]`, []any{"aGVsbG8=", "hello", "hello"}},
		{"timer ids are numbers", `module.exports = () => typeof setTimeout(() => {}, 1)`, "number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runOK(t, r, tc.code, nil, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run mismatch (-want +got):\n%s", diff)
			}
		})
	}

	e := runErr(t, r, `module.exports = async () => { await new Promise(r => setTimeout(r, 1)); setTimeout(() => { throw new RateLimitError('in a timer') }, 1); await new Promise(() => {}) }`, nil, nil)
	if e.Kind != Thrown || e.Class != "RateLimitError" || e.Status != 429 {
		t.Errorf("exception in a timer = %#v, want the RateLimitError", e)
	}
	e = runErr(t, r, `module.exports = async () => { for (let i = 0; i < 1001; i++) setTimeout(() => {}, 1000) }`, nil, nil)
	if e.Kind != Thrown || e.Message != "too many pending timers (the limit is 1000)" {
		t.Errorf("1001 timers = %#v", e)
	}
	if e := runErr(t, r, `module.exports = () => btoa('✓')`, nil, nil); e.Message != "Invalid character" {
		t.Errorf("btoa('✓') = %#v", e)
	}
	if e := runErr(t, r, `module.exports = () => setTimeout('code', 1)`, nil, nil); !strings.HasPrefix(e.Message, "TypeError") {
		t.Errorf("setTimeout(string) = %#v", e)
	}
}

func TestGlobals(t *testing.T) {
	r := New(Options{})
	got := runOK(t, r, `module.exports = () => ({
		types: [typeof console, typeof console.log, typeof setTimeout, typeof queueMicrotask, typeof require, typeof module,
			typeof Buffer, typeof URL, typeof URLSearchParams, typeof TextEncoder, typeof TextDecoder, typeof fetch, typeof Headers,
			typeof process, typeof XMLHttpRequest, typeof Request, typeof Response, typeof __dirname, typeof __filename, typeof global],
		same: console === console && setTimeout === globalThis.setTimeout,
		names: [console.log.name, setTimeout.name, require.name, 'x'.repeat.name, [].join.name, String(require)],
	})`, nil, nil)
	want := map[string]any{
		"types": []any{"object", "function", "function", "function", "function", "object",
			"function", "function", "function", "function", "function", "function", "function",
			"undefined", "undefined", "undefined", "undefined", "undefined", "undefined", "undefined"},
		"same":  true,
		"names": []any{"log", "setTimeout", "require", "repeat", "join", "function require() { [native code] }"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("globals mismatch (-want +got):\n%s", diff)
	}

	// The code may replace the sandbox's globals.
	got = runOK(t, r, `module.exports = () => { console = {log() { return 'mine' }}; globalThis.BadRequestError = 1; return [console.log(), BadRequestError] }`, nil, nil)
	if !cmp.Equal(got, []any{"mine", 1.0}) {
		t.Errorf("replaced globals = %v", got)
	}
	got = runOK(t, r, `'use strict'; const console = {log: () => 'local'}; module.exports = () => console.log()`, nil, nil)
	if got != "local" {
		t.Errorf("shadowed console = %v", got)
	}

	// Stack traces name functions, never Go functions or host paths.
	got = runOK(t, r, `module.exports = () => { try { require('fs') } catch (e) { return e.stack } }`, nil, nil)
	stack, _ := got.(string)
	checkSafe(t, stack)
	if !strings.Contains(stack, "at require (native)") || !strings.Contains(stack, "code.js:1:") {
		t.Errorf("stack = %q", stack)
	}
}
