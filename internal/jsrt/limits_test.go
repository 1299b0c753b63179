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

func TestTimeout(t *testing.T) {
	r := New(Options{Timeout: 100 * time.Millisecond})
	tests := []struct {
		name string
		code string
		min  time.Duration
		msg  string
	}{
		{"busy loop", `module.exports = () => { while (true) {} }`, 100 * time.Millisecond, "the code did not finish within 100ms"},
		{"busy loop after await", `module.exports = async () => { await null; for (;;) {} }`, 100 * time.Millisecond, "the code did not finish within 100ms"},
		{"busy loop in a promise callback", `module.exports = () => Promise.resolve().then(() => { while (true) {} })`, 100 * time.Millisecond, "the code did not finish within 100ms"},
		{"busy loop in a timer", `module.exports = () => new Promise(() => setTimeout(() => { while (true) {} }, 1))`, 100 * time.Millisecond, "the code did not finish within 100ms"},
		{"catching does not help", `module.exports = () => { for (;;) { try { while (true) {} } catch (e) {} finally { continue } } }`, 100 * time.Millisecond, "the code did not finish within 100ms"},
		{"interval keeps the promise alive", `module.exports = async () => { await new Promise(() => setInterval(() => {}, 5)) }`, 90 * time.Millisecond, "the code did not finish within 100ms"},
		{"promise that never settles", `module.exports = async () => { await new Promise(() => {}) }`, 0, "the code's promise never settles: it waits for something that cannot happen"},
		{"timer due after the deadline", `module.exports = async () => { await new Promise(r => setTimeout(r, 60000)) }`, 0, "the code did not finish within 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, took := runLimit(t, r, context.Background(), tc.code, Timeout)
			if e.Message != tc.msg {
				t.Errorf("Message = %q, want %q", e.Message, tc.msg)
			}
			if took < tc.min || took > tc.min+time.Second {
				t.Errorf("Run took %v, want about %v", took, tc.min)
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
	if took > time.Second || !strings.HasPrefix(e.Message, "the code did not finish within ") {
		t.Errorf("ctx deadline: took %v, %q", took, e.Message)
	}
	checkWorks(t, r)

	// Cancellation interrupts too.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	e, took = runLimit(t, r, ctx, code, Timeout)
	if took > time.Second || e.Message != "the invocation was canceled" {
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

func TestTimeoutInsideABuiltin(t *testing.T) {
	// A catastrophic regular expression is one built-in call that goja
	// cannot interrupt: Run returns at the deadline anyway.
	r := New(Options{Timeout: 100 * time.Millisecond})
	code := `module.exports = () => /^(?=a)(a|aa)+$/.test('a'.repeat(40) + '!')`
	_, took := runLimit(t, r, context.Background(), code, Timeout)
	if took > time.Second {
		t.Errorf("Run took %v", took)
	}
	checkWorks(t, r)
}

func TestMemoryLimit(t *testing.T) {
	r := New(Options{MaxMemoryBytes: 16 << 20, Timeout: 30 * time.Second})
	for _, code := range []string{
		`module.exports = () => { const a = []; while (true) a.push('x'.repeat(1024) + a.length) }`,
		`module.exports = async () => { const a = []; for (;;) { a.push({n: a.length, s: String(a.length).repeat(100)}); if (a.length % 1000 === 0) await null } }`,
		`module.exports = () => { const m = {}; for (let i = 0; ; i++) m['key' + i] = i }`,
	} {
		e, took := runLimit(t, r, context.Background(), code, MemoryLimit)
		if e.Message != "the code used more than 16 MiB of memory" {
			t.Errorf("Message = %q", e.Message)
		}
		t.Logf("stopped after %v", took)
		checkWorks(t, r)
	}
	if got := New(Options{}).opts.MaxMemoryBytes; got != 64<<20 {
		t.Errorf("default MaxMemoryBytes = %d", got)
	}
}

func TestBoundedBuiltins(t *testing.T) {
	r := New(Options{MaxMemoryBytes: 1 << 20})
	for _, expr := range []string{
		`'x'.repeat(2 ** 30)`,
		`'ab'.repeat(1 << 19 + 1)`,
		`''.padStart(2 ** 31)`,
		`'x'.padEnd(1e9, 'yz')`,
		`new Array(2 ** 30).join('ab')`,
		`String(new Array(2 ** 25))`,
		`new Array(2 ** 32 - 1).fill(0)`,
		`[].fill.call({length: 2 ** 40}, 1)`,
	} {
		e := runErr(t, r, `module.exports = () => `+expr, nil, nil)
		if e.Kind != Thrown || (e.Message != "RangeError: Invalid string length" && e.Message != "RangeError: Invalid array length") {
			t.Errorf("%s = %#v, want a RangeError", expr, e)
		}
	}
	got := runOK(t, r, `module.exports = () => ['ab'.repeat(1000).length, 'x'.padStart(1000).length, 'x'.padEnd(5, 'ab'),
		new Array(1000).join('-').length, new Array(1000).fill(1).length, [1, 2, 3].fill(0, -1).join(), [1, 2].join(), String([1, [2, 3]])]`, nil, nil)
	want := []any{2000.0, 1000.0, "xabab", 999.0, 1000.0, "1,2,0", "1,2", "1,2,3"}
	for i := range want {
		if got.([]any)[i] != want[i] {
			t.Errorf("bounded built-ins changed results: got %v, want %v", got, want)
			break
		}
	}
}

func TestRecursion(t *testing.T) {
	r := New(Options{Timeout: 5 * time.Second})
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

func TestMemoryGuardStopsWhenIdle(t *testing.T) {
	r := New(Options{})
	runOK(t, r, `module.exports = () => 1`, nil, nil)
	deadline := time.Now().Add(time.Second)
	for {
		guard.mu.Lock()
		running, watching := guard.running, len(guard.watches)
		guard.mu.Unlock()
		if !running && watching == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the memory monitor is still running (%d watches)", watching)
		}
		time.Sleep(guardInterval)
	}
}
