package jsrt

import (
	"context"
	"strings"
	"testing"
	"time"
)

// runLimit runs code expecting an error of kind, and returns it with the
// time Run took.
func runLimit(t *testing.T, r *Runtime, ctx context.Context, code string, kind ErrorKind) (*Error, time.Duration) {
	t.Helper()
	p := mustCompile(t, r, code)
	start := time.Now()
	out, err := r.Run(ctx, p, nil, Host{})
	took := time.Since(start)
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("Run(%q) = %v, %v; want an *Error", code, out, err)
	}
	if e.Kind != kind || e.Status != 500 || e.Class != "" {
		t.Fatalf("Run(%q) = %#v, want kind %v", code, e, kind)
	}
	checkSafe(t, e.Error())
	return e, took
}

// slack bounds how long a run may take past its deadline in these tests:
// generous, since CI machines are busy and -race is slow. Only the
// deadline itself is exact: nothing is interrupted before it.
const slack = 5 * time.Second

func TestTimeout(t *testing.T) {
	r := New(Options{Timeout: 100 * time.Millisecond})
	tests := []struct {
		name   string
		code   string
		budget time.Duration // given with WithTimeout; 0 for r's 100ms
		early  bool          // ends before the deadline, not at it
		msg    string
	}{
		{"busy loop", `module.exports = () => { while (true) {} }`, 0, false, "the code did not finish within 100ms"},
		{"busy loop after await", `module.exports = async () => { await null; for (;;) {} }`, 0, false, "the code did not finish within 100ms"},
		{"busy loop in a promise callback", `module.exports = () => Promise.resolve().then(() => { while (true) {} })`, 0, false, "the code did not finish within 100ms"},
		{"busy loop in a timer", `module.exports = () => new Promise(() => setTimeout(() => { while (true) {} }, 1))`, 0, false, "the code did not finish within 100ms"},
		{"catching does not help", `module.exports = () => { for (;;) { try { while (true) {} } catch (e) {} finally { continue } } }`, 0, false, "the code did not finish within 100ms"},
		{"interval keeps the promise alive", `module.exports = async () => { await new Promise(() => setInterval(() => {}, 5)) }`, 0, false, "the code did not finish within 100ms"},
		{"promise that never settles", `module.exports = async () => { await new Promise(() => {}) }`, time.Minute, true, "the code's promise never settles: it waits for something that cannot happen"},
		{"timer due after the deadline", `module.exports = async () => { await new Promise(r => setTimeout(r, 120000)) }`, time.Minute, true, "the code did not finish within 1m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			budget := r.opts.Timeout
			if tc.budget > 0 {
				ctx, budget = WithTimeout(ctx, tc.budget), tc.budget
			}
			e, took := runLimit(t, r, ctx, tc.code, Timeout)
			if e.Message != tc.msg {
				t.Errorf("Message = %q, want %q", e.Message, tc.msg)
			}
			switch {
			case tc.early && took > slack:
				t.Errorf("Run took %v, want it to end at once", took)
			case !tc.early && (took < budget-10*time.Millisecond || took > budget+slack):
				// A setInterval of 5ms ends when its next run is due
				// after the deadline: up to 5ms before it.
				t.Errorf("Run took %v, want about %v", took, budget)
			}
			checkWorks(t, r)
		})
	}
}

func TestTimeoutFromContext(t *testing.T) {
	r := New(Options{Timeout: 10 * time.Second})
	code := `module.exports = () => { while (true) {} }`

	// An earlier ctx deadline wins over Options.Timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e, took := runLimit(t, r, ctx, code, Timeout)
	if took > slack || !strings.HasPrefix(e.Message, "the code did not finish within ") {
		t.Errorf("ctx deadline: took %v, %q", took, e.Message)
	}
	checkWorks(t, r)

	// Cancellation interrupts too.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	e, took = runLimit(t, r, ctx, code, Timeout)
	if took > slack || e.Message != "the invocation was canceled" {
		t.Errorf("canceled: took %v, %q", took, e.Message)
	}
	checkWorks(t, r)

	// A ctx that has already ended runs nothing.
	e, _ = runLimit(t, r, ctx, `module.exports = () => 1`, Timeout)
	if e.Message != "the invocation was canceled" {
		t.Errorf("canceled before: %q", e.Message)
	}
	if got := New(Options{}).opts.Timeout; got != 10*time.Second {
		t.Errorf("default Timeout = %v", got)
	}
}

// stuckClient's GetToken ignores ctx and blocks until release is closed:
// a native call that nothing can interrupt, as a long built-in call (a
// huge sort, a catastrophic regular expression) is.
type stuckClient struct {
	fakeClient
	release chan struct{}
}

func (c *stuckClient) GetToken(context.Context, string) (any, error) {
	<-c.release
	return "late", nil
}

func TestTimeoutInsideANativeCall(t *testing.T) {
	// Run returns at the deadline (and a short grace) even when the code
	// is inside a call goja cannot interrupt; the abandoned goroutine stops
	// at its next instruction once the call returns.
	r := New(Options{Timeout: 100 * time.Millisecond})
	c := &stuckClient{release: make(chan struct{})}
	defer close(c.release)
	p := mustCompile(t, r, `module.exports = (req) => { req.client.getToken('x'); for (;;) {} }`)
	start := time.Now()
	_, err := r.Run(t.Context(), p, nil, Host{Client: c})
	took := time.Since(start)
	if e, ok := err.(*Error); !ok || e.Kind != Timeout || e.Message != "the code did not finish within 100ms" {
		t.Errorf("Run = %#v, want the Timeout", err)
	}
	if took > 100*time.Millisecond+slack {
		t.Errorf("Run took %v", took)
	}
	checkWorks(t, r)
}

func TestRecursion(t *testing.T) {
	r := New(Options{Timeout: 30 * time.Second})
	for _, code := range []string{
		`module.exports = () => { function f(n) { return f(n + 1) + 1 } return f(0) }`,
		`module.exports = async () => { const f = async (n) => (await f(n + 1)) + 1; return f(0) }`,
		`module.exports = () => { const f = () => [0].map(f); return f() }`,
		`module.exports = () => { const o = {get x() { return this.x }}; return o.x }`,
		`module.exports = () => { try { (function f() { f() })() } catch (e) { return 'caught' } }`,
	} {
		e, _ := runLimit(t, r, context.Background(), code, RuntimeFailure)
		if e.Message != "Maximum call stack size exceeded" {
			t.Errorf("Run(%q): Message = %q", code, e.Message)
		}
		checkWorks(t, r)
	}
	// Deep but bounded recursion works.
	if got := runOK(t, r, `module.exports = () => { const f = (n) => n === 0 ? 0 : 1 + f(n - 1); return f(2500) }`, nil, nil); got != 2500.0 {
		t.Errorf("f(2500) = %v", got)
	}
}
