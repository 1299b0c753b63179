package jsrt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestNoCodeFromStrings: eval and every Function constructor refuse, so
// no unbounded text reaches goja's parser at run time (a deep nesting
// there is a fatal stack overflow for the whole process).
func TestNoCodeFromStrings(t *testing.T) {
	r := New(Options{Timeout: 2 * time.Second})
	for _, code := range []string{
		`module.exports = () => eval("[".repeat(3e6))`,
		`module.exports = () => (0, eval)("1")`,
		`module.exports = () => globalThis.eval("1")`,
		`module.exports = () => new Function("return " + "[".repeat(3e6))`,
		`module.exports = () => Function("return 1")()`,
		`module.exports = () => (function () {}).constructor("return 1")()`,
		`module.exports = () => (async function () {}).constructor("return 1")()`,
		`module.exports = () => (function* () {}).constructor("yield 1")`,
	} {
		e := runErr(t, r, code, nil, nil)
		if e.Kind != Thrown || !strings.Contains(e.Message, "cannot compile code from a string") {
			t.Errorf("Run(%.60s) = %#v, want the refusal", code, e)
		}
	}
	// Functions still are functions.
	out := runOK(t, r, `module.exports = () => [(() => 1) instanceof Function, typeof Function.prototype.call, (function () {}).constructor === Function]`, nil, nil)
	if got, _ := out.([]any); len(got) != 3 || got[0] != true || got[1] != "function" || got[2] != true {
		t.Errorf("Function checks = %v", out)
	}
	checkWorks(t, r)
}

// TestJSONParseDepth: JSON.parse refuses nesting past maxJSONDepth with a
// SyntaxError instead of recursing until the process dies, converts its
// argument once, and parses ordinary JSON as before.
func TestJSONParseDepth(t *testing.T) {
	r := New(Options{Timeout: 2 * time.Second})
	e := runErr(t, r, `module.exports = () => JSON.parse("[".repeat(3e6))`, nil, nil)
	if !strings.Contains(e.Message, "SyntaxError: JSON nested more than 512 levels deep") {
		t.Errorf("deep JSON = %#v, want the SyntaxError", e)
	}
	out := runOK(t, r, `module.exports = () => {
		let n = 0;
		const text = {toString() { return n++ ? "[".repeat(1e5) : "[1]" }};
		return [JSON.parse('{"a": [1, "]]]", {"b": null}]}'), JSON.parse("[1, 2]", (k, v) => typeof v === "number" ? v * 2 : v), JSON.parse(text)];
	}`, nil, nil)
	if got := fmtJSON(out); got != `[{"a":[1,"]]]",{"b":null}]},[2,4],[1]]` {
		t.Errorf("JSON.parse results = %s", got)
	}
}

// TestBoundedBuiltinsConvertOnce: repeat and join convert their values
// once, so a toString that answers small to a check and big afterwards
// gains nothing; walks over a huge sparse or array-like length are
// refused instead of burning CPU past the deadline.
func TestBoundedBuiltinsConvertOnce(t *testing.T) {
	r := New(Options{Timeout: 500 * time.Millisecond, MaxMemoryBytes: 64 << 20})
	// The check and the repeat see the same string: "" here.
	if out := runOK(t, r, `module.exports = () => { let n = 0; const big = "x".repeat(1e6); return String.prototype.repeat.call({toString() { return n++ ? big : "" }}, 2000).length }`, nil, nil); out != int64(0) && out != 0.0 {
		t.Errorf("repeat of a two-faced toString = %v, want 0", out)
	}
	for _, code := range []string{
		`module.exports = () => new Array(1000).fill("x".repeat(1e6)).join("").length`,
		`module.exports = () => Array.prototype.lastIndexOf.call({length: 2 ** 53 - 1}, 1)`,
		`module.exports = () => "x".repeat(3e4).replace(/x/g, "y".repeat(3e4)).length`,
		`module.exports = () => "x".repeat(3e4).replaceAll("x", "y".repeat(3e4)).length`,
		`module.exports = () => { const a = []; a.length = 2 ** 32 - 1; return a.map(x => x).length }`,
		`module.exports = () => { const a = []; a.length = 2 ** 32 - 1; return a.indexOf(1) }`,
	} {
		start := time.Now()
		e := runErr(t, r, code, nil, nil)
		// A RangeError, or the deadline when building up to the limit
		// takes longer than it (under -race); either way bounded.
		if !strings.Contains(e.Message, "RangeError") && e.Class != "RangeError" && e.Kind != Timeout {
			t.Errorf("Run(%.70s) = %#v, want a RangeError", code, e)
		}
		if took := time.Since(start); took > 10*time.Second { // minutes without the bounds; generous for loaded CI machines
			t.Errorf("Run(%.70s) took %v", code, took)
		}
	}
	out := runOK(t, r, `module.exports = () => [[1, null, undefined, "a", [2, 3]].join(), [].join("-"), ["x"].join(), Array.prototype.join.call({length: 2, 0: "a", 1: "b"}, "+"), "ab".repeat(3), "a-b-c".replace(/-/g, "+"), "aXbX".replaceAll("X", (m) => m.toLowerCase()), "ab".replace("b", "[$&]")]`, nil, nil)
	if got := fmtJSON(out); got != `["1,,,a,2,3","","x","a+b","ababab","a+b+c","axbx","a[b]"]` {
		t.Errorf("join and repeat = %s", got)
	}
	checkWorks(t, r)
}

// TestThrownRevokedProxy: a thrown revoked Proxy is classified like any
// thrown value, without running its traps outside the guard.
func TestThrownRevokedProxy(t *testing.T) {
	r := New(Options{Timeout: time.Second})
	e := runErr(t, r, `module.exports = () => { const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); throw proxy }`, nil, nil)
	if e.Kind != Thrown {
		t.Errorf("thrown revoked proxy = %#v, want Thrown", e)
	}
	checkWorks(t, r)
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBigTypedArrayResultIsRefused: a returned typed array too big to
// export is refused without listing its indexes.
func TestBigTypedArrayResultIsRefused(t *testing.T) {
	r := New(Options{Timeout: time.Second})
	start := time.Now()
	e := runErr(t, r, `module.exports = () => new Uint8Array(3e7)`, nil, nil)
	if !strings.Contains(e.Message, "more than") {
		t.Errorf("returning a 3e7-element typed array = %#v, want refused as too large", e)
	}
	if took := time.Since(start); took > 10*time.Second { // minutes without the bounds; generous for loaded CI machines
		t.Errorf("took %v", took)
	}
	checkWorks(t, r)
}
