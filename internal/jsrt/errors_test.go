package jsrt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestErrorClasses(t *testing.T) {
	r := New(Options{})
	classes := []struct {
		name   string
		status int
	}{
		{"AuthenticationError", 401},
		{"AuthorizationError", 403},
		{"BadRequestError", 400},
		{"InvalidPaymentMethodError", 402},
		{"RateLimitError", 429},
		{"ReactorRuntimeError", 500},
		{"ServiceUnavailableError", 503},
	}
	if len(classes)+1 != len(errorClasses) {
		t.Fatalf("the test covers %d classes, the package has %d", len(classes)+1, len(errorClasses))
	}
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			// Each class is a real class: it extends Error, instanceof works,
			// and it is also exported by require('@svc/errors').
			got := runOK(t, r, fmt.Sprintf(`module.exports = () => {
				const e = new %[1]s('m');
				return [e instanceof %[1]s, e instanceof Error, e.name, e.message, e.status, String(e),
					require('@svc/errors').%[1]s === %[1]s, typeof e.stack, %[1]s.name]
			}`, c.name), nil, nil)
			want := []any{true, true, c.name, "m", float64(c.status), c.name + ": m", true, "string", c.name}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("class mismatch (-want +got):\n%s", diff)
			}

			shapes := []struct {
				arg     string
				message string
				errors  map[string][]string
			}{
				{`'card declined'`, "card declined", map[string][]string{"error": {"card declined"}}},
				{`['a', 'b']`, "", map[string][]string{"error": {"a", "b"}}},
				{`{card: ['bad number', 'expired'], cvc: 'missing', n: 5, o: {x: 1}}`, "", map[string][]string{
					"card": {"bad number", "expired"}, "cvc": {"missing"}, "n": {"5"}, "o": {`{"x":1}`}}},
				{``, "", nil},
			}
			for _, sh := range shapes {
				code := fmt.Sprintf(`module.exports = async () => { throw new %s(%s) }`, c.name, sh.arg)
				e := runErr(t, r, code, nil, nil)
				if e.Kind != Thrown || e.Class != c.name || e.Status != c.status || e.Headers != nil || e.Body != nil {
					t.Errorf("%s: %#v", code, e)
				}
				if sh.message != "" && e.Message != sh.message {
					t.Errorf("%s: Message = %q, want %q", code, e.Message, sh.message)
				}
				if e.Message == "" {
					t.Errorf("%s: empty message", code)
				}
				if diff := cmp.Diff(sh.errors, e.Errors); diff != "" {
					t.Errorf("%s: Errors mismatch (-want +got):\n%s", code, diff)
				}
				if want := fmt.Sprintf("jsrt: %s (%d): %s", c.name, c.status, e.Message); e.Error() != want {
					t.Errorf("Error() = %q, want %q", e.Error(), want)
				}
			}
		})
	}
}

func TestErrorClassDetails(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		code string
		want Error
	}{
		{"subclass", `class CardError extends BadRequestError {}; module.exports = () => { throw new CardError('x') }`,
			Error{Kind: Thrown, Status: 400, Class: "BadRequestError", Message: "x", Errors: map[string][]string{"error": {"x"}}}},
		{"status property ignored", `module.exports = () => { const e = new BadRequestError('x'); e.status = 200; throw e }`,
			Error{Kind: Thrown, Status: 400, Class: "BadRequestError", Message: "x", Errors: map[string][]string{"error": {"x"}}}},
		{"rejected promise", `module.exports = () => Promise.reject(new AuthorizationError('no'))`,
			Error{Kind: Thrown, Status: 403, Class: "AuthorizationError", Message: "no", Errors: map[string][]string{"error": {"no"}}}},
		{"a look-alike is a plain error", `module.exports = () => { const e = new Error('x'); e.name = 'BadRequestError'; e.status = 400; throw e }`,
			Error{Kind: Thrown, Status: 500, Class: "Error", Message: "BadRequestError: x"}},
		{"prototype only", `module.exports = () => { throw Object.create(BadRequestError.prototype) }`,
			Error{Kind: Thrown, Status: 500, Class: "Error", Message: "{}"}},
		{"custom", `module.exports = async () => { throw new CustomHttpResponseError({status: 418, headers: {'Content-Type': 'text/plain', 'X-N': 1, 'X-L': ['a', 'b']}, body: {teapot: true, list: [1]}}) }`,
			Error{Kind: Thrown, Status: 418, Class: "CustomHttpResponseError", Message: "Custom HTTP response",
				Headers: map[string]string{"Content-Type": "text/plain", "X-N": "1", "X-L": "a, b"},
				Body:    map[string]any{"teapot": true, "list": []any{1.0}}}},
		{"custom, string body", `module.exports = async () => { throw new CustomHttpResponseError({status: 302, headers: {Location: '/x'}, body: 'moved'}) }`,
			Error{Kind: Thrown, Status: 302, Class: "CustomHttpResponseError", Message: "Custom HTTP response", Headers: map[string]string{"Location": "/x"}, Body: "moved"}},
		{"custom, bad status", `module.exports = async () => { throw new CustomHttpResponseError({status: 99}) }`,
			Error{Kind: Thrown, Status: 500, Class: "CustomHttpResponseError", Message: "Custom HTTP response"}},
		{"custom, no argument", `module.exports = async () => { throw new CustomHttpResponseError() }`,
			Error{Kind: Thrown, Status: 500, Class: "CustomHttpResponseError", Message: "Custom HTTP response"}},
		{"custom, body not JSON", `module.exports = async () => { throw new CustomHttpResponseError({status: 400, body: {f() {}}}) }`,
			Error{Kind: RuntimeFailure, Status: 500, Message: "CustomHttpResponseError body.f is a function, which is not JSON-compatible"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := runErr(t, r, tc.code, nil, nil)
			if diff := cmp.Diff(&tc.want, e); diff != "" {
				t.Errorf("Run(%q) mismatch (-want +got):\n%s", tc.code, diff)
			}
		})
	}
}

func TestThrownValues(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		throw string
		want  string
	}{
		{`new Error('plain')`, "plain"},
		{`new Error()`, "Error"},
		// The engine's error classes: their messages quote values, which
		// may be detokenized data, and are withheld (a card number the
		// code indexed with is not answered to the caller).
		{`new TypeError('bad type')`, "TypeError: " + withheldMessage},
		{`(() => { null.x })()`, "TypeError: " + withheldMessage},
		{`(() => { null['4111111111111111'] })()`, "TypeError: " + withheldMessage},
		{`(() => { const n = '4111111111111111'; n() })()`, "TypeError: " + withheldMessage},
		{`(() => { undefinedVariable })()`, "ReferenceError: " + withheldMessage},
		{`JSON.parse('{4111111111111111')`, "SyntaxError: " + withheldMessage},
		{`new RangeError('r')`, "RangeError: " + withheldMessage},
		{`'a string'`, "a string"},
		{`42`, "42"},
		{`undefined`, "undefined"},
		{`null`, "null"},
		{`Symbol('s')`, "Symbol(s)"},
		{`{code: 7, detail: 'x'}`, `{"code":7,"detail":"x"}`},
		{`{message: 'has a message'}`, "has a message"},
		{`[1, 2]`, "[1,2]"},
		{`(() => { const o = {}; o.o = o; return o })()`, "[object Object]"},
		{`'x'.repeat(5000)`, strings.Repeat("x", maxMessageBytes) + "…"},
		{`(() => { class MyError extends Error { constructor(m) { super(m); this.name = 'MyError' } }; return new MyError('mine') })()`, "MyError: mine"},
	}
	for _, tc := range tests {
		code := fmt.Sprintf(`module.exports = async () => { throw %s }`, tc.throw)
		e := runErr(t, r, code, nil, nil)
		want := Error{Kind: Thrown, Status: 500, Class: "Error", Message: tc.want}
		if tc.want == "" {
			want.Message = e.Message
		}
		if diff := cmp.Diff(&want, e); diff != "" {
			t.Errorf("throw %s: mismatch (-want +got):\n%s", tc.throw, diff)
		}
	}

	// A thrown value whose properties throw when read still gives an error.
	for _, code := range []string{
		`module.exports = () => { throw new Proxy({}, {get() { throw new Error('trap') }}) }`,
		`module.exports = () => { const p = new Proxy({}, {get() { throw p }}); throw p }`,
		`module.exports = () => { const p = new Proxy({}, {ownKeys() { throw p }}); throw p }`,
		`module.exports = () => { const p = new Proxy({}, {ownKeys() { throw p }}); throw new BadRequestError(p) }`,
		`module.exports = () => { const p = new Proxy({}, {ownKeys() { throw p }}); throw new CustomHttpResponseError({body: p}) }`,
		`module.exports = () => { const p = new Proxy({}, {ownKeys() { throw p }}); return p }`,
	} {
		e := runErr(t, r, code, nil, nil)
		if e.Kind != Thrown && e.Kind != RuntimeFailure {
			t.Errorf("Run(%q) = %#v", code, e)
		}
	}
}

func TestErrorMessagesCarryNoHostDetail(t *testing.T) {
	r := New(Options{Timeout: 50 * time.Millisecond})
	codes := []string{
		`module.exports = () => { throw new Error('x') }`,
		`module.exports = () => { null.x }`,
		`module.exports = () => require('fs')`,
		`module.exports = () => require('crypto').createHash('nope')`,
		`module.exports = () => require('crypto').createHash('sha256').digest('nope')`,
		`module.exports = () => JSON.parse('{')`,
		`module.exports = () => new RegExp('(')`,
		`module.exports = () => { function f() { f() } f() }`,
		`module.exports = () => { while (true) {} }`,
		`module.exports = () => ({f() {}})`,
		`module.exports = () => Symbol()`,
		`module.exports = (req) => req.client.getToken('x')`,
		`module.exports = (req) => req.client.tokenize({f() {}})`,
		`module.exports = () => String(require) + String(console.log) + new Error('x').stack`,
	}
	for _, code := range codes {
		out, err := run(t, r, code, nil, &fakeClient{})
		if s, ok := out.(string); ok {
			checkSafe(t, s)
		}
		if err != nil {
			checkSafe(t, err.Error())
			var je *Error
			if !errors.As(err, &je) {
				t.Errorf("Run(%q) = %T, want *Error", code, err)
			}
		}
	}
}

func TestErrorKindString(t *testing.T) {
	for k, want := range map[ErrorKind]string{Thrown: "thrown", Timeout: "timeout", MemoryLimit: "memory limit", RuntimeFailure: "runtime failure", 9: "ErrorKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("ErrorKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
	e := &Error{Kind: Timeout, Status: 500, Message: "late"}
	if got := e.Error(); got != "jsrt: timeout: late" {
		t.Errorf("Error() = %q", got)
	}
}
