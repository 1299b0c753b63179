package sandbox

import (
	"strings"
	"testing"
	"time"
)

func newSandbox(t *testing.T, opts Options) *Sandbox {
	t.Helper()
	s := New(opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRunReturnsTheResult(t *testing.T) {
	s := newSandbox(t, Options{})
	out, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: `module.exports = async (req) => ({sum: req.a + req.b})`, Req: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(map[string]any)["sum"]; got != 3.0 {
		t.Fatalf("sum = %v, want 3", got)
	}
}

// stopReason runs code and returns the StopError's reason.
func stopReason(t *testing.T, s *Sandbox, code string, timeout time.Duration) (Reason, time.Duration) {
	t.Helper()
	start := time.Now()
	_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: code, Timeout: timeout})
	took := time.Since(start)
	r := ReasonOf(err)
	if r == 0 {
		t.Fatalf("Run(%.60q) = %v, want the code stopped", code, err)
	}
	return r, took
}

func TestHostileCodeStopsOnlyItsWorker(t *testing.T) {
	s := newSandbox(t, Options{MemoryBytes: 64 << 20})
	cases := []struct {
		name string
		code string
		want Reason
	}{
		{"cyclic flat", `module.exports = () => { const a = [1]; a.push(a); return a.flat(Infinity).length }`, Crashed},
		{"big typed array", `module.exports = () => new Uint8Array(2**31).fill(1).length`, StoppedMemory},
		{"huge array-like walk", `module.exports = () => Array.prototype.lastIndexOf.call({length: 2**53 - 1}, 1)`, StoppedTime},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, took := stopReason(t, s, tc.code, 2*time.Second)
			// Under the race detector a memory bomb may meet its deadline
			// first; the exact reason is checked in ordinary builds.
			if got != tc.want && raceMemoryFactor == 1 {
				t.Errorf("reason = %v, want %v", got, tc.want)
			}
			if took > 2*time.Second+5*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
	out, err := s.Run(t.Context(), Invocation{Tenant: "b", Code: `module.exports = () => 42`})
	if err != nil || out != 42.0 {
		t.Fatalf("after the attacks: %v, %v", out, err)
	}
}

func TestInterruptedLoopIsATimeout(t *testing.T) {
	s := newSandbox(t, Options{})
	_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: `module.exports = () => { while (true) {} }`, Timeout: time.Second})
	if ReasonOf(err) != StoppedTime {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("message = %q", err.Error())
	}
}

// TestCodeThatDoesNotCompileIsSentAgain: a worker that could not compile
// code does not hold it, so the next run on it sends the code again and
// gets the same explanation.
func TestCodeThatDoesNotCompileIsSentAgain(t *testing.T) {
	s := newSandbox(t, Options{Workers: 1})
	for i := range 2 {
		_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: "module.exports = ("})
		if err == nil || !strings.Contains(err.Error(), "does not compile") {
			t.Fatalf("run %d = %v, want the compile error", i, err)
		}
	}
}
