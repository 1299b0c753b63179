package jsrt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustCompile(t testing.TB, r *Runtime, code string) *Program {
	t.Helper()
	p, err := r.Compile(code)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return p
}

func run(t *testing.T, r *Runtime, code string, req map[string]any, client Client) (any, error) {
	t.Helper()
	return r.Run(context.Background(), mustCompile(t, r, code), req, client)
}

func TestCompileErrors(t *testing.T) {
	r := New(Options{MaxCodeBytes: 200})
	_, err := r.Compile("module.exports = function () {\n  var x = ;\n}")
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Line != 2 || ce.NotAFunction {
		t.Errorf("syntax error = %#v", err)
	}
	for _, code := range []string{"module.exports = 42", "exports.handler = function () {}", ""} {
		_, err = r.Compile(code)
		if !errors.As(err, &ce) || !ce.NotAFunction {
			t.Errorf("Compile(%q) = %v, want NotAFunction", code, err)
		}
	}
	_, err = r.Compile("module.exports = function () {}; //" + strings.Repeat("x", 200))
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "200 bytes") {
		t.Errorf("code too big = %v", err)
	}
	_, err = r.Compile("throw new Error('at load')")
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "at load") {
		t.Errorf("module that throws = %v", err)
	}
	p1, _ := r.Compile("module.exports = () => 1")
	p2, _ := r.Compile("module.exports = () => 1")
	if p1 != p2 || p1.Hash() == "" {
		t.Error("the same code was compiled twice")
	}
}

func TestRunResults(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		code string
		want string
	}{
		{`module.exports = function (req) { return req.args.a + 1 }`, "3"},
		{`module.exports = async function (req) { return {n: [1, "x", null, true], c: req.configuration.k} }`, "map[c:v n:[1 x <nil> true]]"},
		{`module.exports = async (req) => { const v = await Promise.resolve(5).then(x => x * 2); return v }`, "10"},
		{`module.exports = async (req) => { await null; return undefined }`, "<nil>"},
		{`module.exports = (req) => req.client`, "<nil>"},
		{`module.exports = (req) => ({f: function () {}, u: undefined, d: 1.5})`, "map[d:1.5]"},
	}
	for _, tt := range tests {
		got, err := run(t, r, tt.code, map[string]any{"args": map[string]any{"a": 2}, "configuration": map[string]any{"k": "v"}}, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.code, err)
			continue
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("%s = %v, want %s", tt.code, got, tt.want)
		}
	}
	_, err := run(t, r, `module.exports = () => { const a = {}; a.a = a; return a }`, nil, nil)
	var je *Error
	if !errors.As(err, &je) || je.Kind != RuntimeFailure {
		t.Errorf("cyclic result = %v", err)
	}
}

type fakeClient struct{ deleted string }

func (f *fakeClient) Tokenize(_ context.Context, body any) (any, error) {
	return map[string]any{"id": fmt.Sprint(body)}, nil
}
func (f *fakeClient) GetToken(_ context.Context, id string) (any, error) {
	if id == "missing" {
		return nil, errors.New("token not found")
	}
	return map[string]any{"id": id, "data": "secret"}, nil
}
func (f *fakeClient) DeleteToken(_ context.Context, id string) error { f.deleted = id; return nil }
func (f *fakeClient) Detokenize(_ context.Context, body any) (any, error) {
	return body, nil
}

func TestClient(t *testing.T) {
	r := New(Options{})
	c := &fakeClient{}
	got, err := run(t, r, `module.exports = async (req) => {
		const t = await req.client.tokenize({a: 1});
		const g = await req.client.getToken("abc");
		await req.client.deleteToken("gone");
		let caught = "";
		try { req.client.getToken("missing") } catch (e) { caught = e.message }
		return {t: t.id, data: g.data, caught: caught, d: req.client.detokenize([1, 2])};
	}`, map[string]any{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[caught:token not found d:[1 2] data:secret t:map[a:1]]" || c.deleted != "gone" {
		t.Errorf("client results = %v, deleted %q", got, c.deleted)
	}
}

func TestErrorClasses(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		throw  string
		status int
		class  string
		msg    string
		errs   string
	}{
		{`new BadRequestError("bad")`, 400, "BadRequestError", "bad", "map[error:[bad]]"},
		{`new BadRequestError(["a", "b"])`, 400, "BadRequestError", "", "map[error:[a b]]"},
		{`new BadRequestError({amount: ["low"], card: "expired"})`, 400, "BadRequestError", "BadRequestError", "map[amount:[low] card:[expired]]"},
		{`new AuthenticationError("x")`, 401, "AuthenticationError", "x", "map[error:[x]]"},
		{`new InvalidPaymentMethodError("x")`, 402, "InvalidPaymentMethodError", "x", "map[error:[x]]"},
		{`new AuthorizationError("x")`, 403, "AuthorizationError", "x", "map[error:[x]]"},
		{`new RateLimitError("x")`, 429, "RateLimitError", "x", "map[error:[x]]"},
		{`new ReactorRuntimeError("x")`, 500, "ReactorRuntimeError", "x", "map[error:[x]]"},
		{`new ServiceUnavailableError("x")`, 503, "ServiceUnavailableError", "x", "map[error:[x]]"},
		{`new Error("plain")`, 500, "Error", "plain", "map[]"},
		{`new TypeError("typed")`, 500, "Error", "typed", "map[]"},
		{`"a string"`, 500, "Error", "a string", "map[]"},
		{`{name: "BadRequestError", status: 400}`, 500, "Error", "the code threw a Object", "map[]"},
	}
	for _, tt := range tests {
		for _, async := range []string{"", "async "} {
			_, err := run(t, r, "module.exports = "+async+"() => { throw "+tt.throw+" }", nil, nil)
			var je *Error
			if !errors.As(err, &je) || je.Kind != Thrown || je.Status != tt.status || je.Class != tt.class || je.Message != tt.msg || fmt.Sprint(je.Errors) != tt.errs {
				t.Errorf("%sthrow %s = %#v", async, tt.throw, err)
			}
		}
	}
	_, err := run(t, r, `module.exports = () => { throw new CustomHttpResponseError({status: 418, headers: {"X-A": "b"}, body: {x: 1}}) }`, nil, nil)
	var je *Error
	if !errors.As(err, &je) || je.Status != 418 || je.Headers["X-A"] != "b" || fmt.Sprint(je.Body) != "map[x:1]" {
		t.Errorf("CustomHttpResponseError = %#v", err)
	}
	_, err = run(t, r, `module.exports = () => { null.x }`, nil, nil)
	if !errors.As(err, &je) || je.Status != 500 || strings.Contains(je.Message, ".go") || strings.Contains(je.Message, "github.com") {
		t.Errorf("TypeError = %#v", err)
	}
	if !strings.Contains(je.Message, "property") {
		t.Errorf("TypeError message = %q", je.Message)
	}
}

func TestRequireAllowList(t *testing.T) {
	r := New(Options{})
	got, err := run(t, r, `const crypto = require("crypto");
	module.exports = () => ({
		sha256: crypto.createHash("sha256").update("abc").digest("hex"),
		md5: crypto.createHash("md5").update("abc").digest("base64"),
		hmac: crypto.createHmac("sha256", "key").update("The quick brown fox jumps over the lazy dog").digest("hex"),
		uuid: crypto.randomUUID().length,
	})`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "map[hmac:f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8 md5:kAFQmDzST7DWlj99KOF/cg== sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad uuid:36]"
	if fmt.Sprint(got) != want {
		t.Errorf("crypto = %v", got)
	}
	for _, mod := range []string{"fs", "child_process", "http", "net", "process"} {
		_, err := run(t, r, `module.exports = () => require("`+mod+`")`, nil, nil)
		var je *Error
		if !errors.As(err, &je) || !strings.Contains(je.Message, "is not available; allowed: crypto") {
			t.Errorf("require(%s) = %v", mod, err)
		}
	}
	got, err = run(t, r, `module.exports = () => [typeof process, typeof setTimeout, typeof fetch, typeof XMLHttpRequest]`, nil, nil)
	if err != nil || fmt.Sprint(got) != "[undefined undefined undefined undefined]" {
		t.Errorf("host objects = %v, %v", got, err)
	}
}

func TestConsoleGoesToTheLogger(t *testing.T) {
	var buf bytes.Buffer
	r := New(Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	got, err := run(t, r, `module.exports = () => { console.log("hello", 42); console.error("oops"); return 1 }`, nil, nil)
	if err != nil || fmt.Sprint(got) != "1" {
		t.Fatalf("run = %v, %v", got, err)
	}
	if !strings.Contains(buf.String(), `message="hello 42"`) || !strings.Contains(buf.String(), "source=error") {
		t.Errorf("log = %s", buf.String())
	}
}

func TestLimits(t *testing.T) {
	fast := New(Options{Timeout: 100 * time.Millisecond})
	roomy := New(Options{Timeout: 5 * time.Second, MaxMemoryBytes: 16 << 20})
	r := fast
	healthy := func() {
		t.Helper()
		if got, err := run(t, r, `module.exports = () => 7`, nil, nil); err != nil || fmt.Sprint(got) != "7" {
			t.Fatalf("after the limit: %v, %v", got, err)
		}
	}
	tests := []struct {
		name string
		code string
		kind ErrorKind
	}{
		{"endless loop", `module.exports = () => { while (true) {} }`, Timeout},
		{"endless async loop", `module.exports = async () => { await null; for (;;) {} }`, Timeout},
		{"promise that never settles", `module.exports = () => new Promise(() => {})`, Timeout},
		{"memory", `module.exports = () => { const a = []; for (;;) { a.push("x".repeat(65536) + a.length) } }`, MemoryLimit},
		{"recursion", `module.exports = function f() { return f() + 1 }`, RuntimeFailure},
	}
	for _, tt := range tests {
		r = fast
		if tt.kind == MemoryLimit {
			r = roomy
		}
		start := time.Now()
		_, err := run(t, r, tt.code, nil, nil)
		var je *Error
		if !errors.As(err, &je) || je.Kind != tt.kind {
			t.Errorf("%s = %#v, want kind %d", tt.name, err, tt.kind)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v", tt.name, d)
		}
		healthy()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Run(ctx, mustCompile(t, r, `module.exports = () => { while (true) {} }`), nil, nil)
	var je *Error
	if !errors.As(err, &je) || je.Kind != Timeout {
		t.Errorf("cancelled ctx = %v", err)
	}
}

func TestNoStateLeaksBetweenRuns(t *testing.T) {
	r := New(Options{})
	p := mustCompile(t, r, `let calls = 0;
	module.exports = () => {
		calls++;
		const seen = [typeof globalThis.leak, typeof Array.prototype.leak, calls];
		globalThis.leak = 1;
		Array.prototype.leak = 1;
		return seen;
	}`)
	for i := range 3 {
		got, err := r.Run(context.Background(), p, nil, nil)
		if err != nil || fmt.Sprint(got) != "[undefined undefined 1]" {
			t.Fatalf("run %d = %v, %v", i, got, err)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	r := New(Options{})
	p := mustCompile(t, r, `module.exports = async (req) => ({n: req.args.n * 2})`)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			got, err := r.Run(context.Background(), p, map[string]any{"args": map[string]any{"n": i}}, nil)
			if err != nil || fmt.Sprint(got) != fmt.Sprintf("map[n:%d]", i*2) {
				t.Errorf("run %d = %v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

func BenchmarkRunTrivial(b *testing.B) {
	r := New(Options{})
	p := mustCompile(b, r, `module.exports = async function (req) { return {raw: req.args} }`)
	req := map[string]any{"args": map[string]any{"amount": 42, "currency": "EUR"}, "configuration": map[string]any{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(context.Background(), p, req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
