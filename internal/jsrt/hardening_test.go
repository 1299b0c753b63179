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
	r := New(Options{Timeout: 30 * time.Second}) // generous: a loaded machine under -race builds the 3 MB strings slowly
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
	r := New(Options{Timeout: 30 * time.Second}) // generous: a loaded machine under -race builds the 3 MB strings slowly
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
