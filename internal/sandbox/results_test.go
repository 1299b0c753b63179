package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sizedResult is code returning a string of n bytes (n+2 as JSON).
func sizedResult(n int) string {
	return fmt.Sprintf(`module.exports = () => "x".repeat(%d)`, n)
}

// TestResultsAreBounded: a result over MaxResultBytes (as JSON) fails with
// a TooLargeError naming the bound, one at the bound succeeds; the same
// for the body of a thrown CustomHttpResponseError, and in process. Before,
// results up to the 32 MiB frame bound were accepted.
func TestResultsAreBounded(t *testing.T) {
	const limit = 256 << 10
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in process %v", inProcess), func(t *testing.T) {
			s := newSandbox(t, Options{MaxResultBytes: limit, InProcess: inProcess})
			out, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: sizedResult(limit - 2)})
			if err != nil || len(out.(string)) != limit-2 {
				t.Fatalf("a result of exactly the bound: %v", err)
			}
			for name, code := range map[string]string{
				"returned": sizedResult(limit - 1),
				"thrown":   `module.exports = () => { throw new CustomHttpResponseError({status: 400, body: "x".repeat(` + fmt.Sprint(limit) + `)}) }`,
			} {
				_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: code})
				var tl *TooLargeError
				if !errors.As(err, &tl) || tl.Limit != limit || !strings.Contains(err.Error(), "256 KiB") {
					t.Errorf("%s: a result over the bound = %v, want a TooLargeError naming 256 KiB", name, err)
				}
			}
			if out, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: `module.exports = () => 1`}); err != nil || out != 1.0 {
				t.Fatalf("after: %v, %v", out, err)
			}
		})
	}
}

// TestDefaultResultBound: with no MaxResultBytes, 4 MiB.
func TestDefaultResultBound(t *testing.T) {
	s := newSandbox(t, Options{})
	_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: sizedResult(4 << 20)})
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != DefaultMaxResultBytes || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("a 4 MiB string = %v, want a TooLargeError naming 4 MiB", err)
	}
}

// pids returns the process ids of the idle workers.
func (p *pool) pids() map[int]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]bool{}
	for _, w := range p.idle {
		out[w.cmd.Process.Pid] = true
	}
	return out
}

// TestLargeInvocationRetiresItsWorker: the worker that ran a large
// invocation (a large result, a result refused as too large, a large
// request) is retired after answering, and the next run gets a fresh one;
// a small invocation keeps its worker. Before, idle workers kept the
// hundreds of MB such runs took.
func TestLargeInvocationRetiresItsWorker(t *testing.T) {
	// A generous timeout: runs moving megabytes under the race detector on
	// a loaded machine took longer than the default 10 s; the test is about
	// retiring workers, not time.
	s := newSandbox(t, Options{Workers: 1, MaxResultBytes: 3 << 20, Timeout: time.Minute})
	run := func(code string, req map[string]any) {
		t.Helper()
		_, err := s.Run(t.Context(), Invocation{Tenant: "a", Code: code, Req: req})
		var tl *TooLargeError
		if err != nil && !errors.As(err, &tl) {
			t.Fatal(err)
		}
	}
	run(`module.exports = () => 1`, nil)
	first := s.pool.pids()
	run(`module.exports = () => 2`, nil)
	if got := s.pool.pids(); fmt.Sprint(got) != fmt.Sprint(first) || len(got) != 1 {
		t.Fatalf("a small run changed the idle workers from %v to %v", first, got)
	}
	cases := map[string]struct {
		code string
		req  map[string]any
	}{
		"large result":             {sizedResult(2 << 20), nil},
		"refused result":           {sizedResult(8 << 20), nil},
		"large request":            {`module.exports = req => req.s.length`, map[string]any{"s": strings.Repeat("y", 2<<20)}},
		"large heap, small result": {`module.exports = () => { const a = []; for (let i = 0; i < 4; i++) a.push(new Array(1 << 18).fill(i)); return a.length }`, nil},
	}
	for name, tc := range cases {
		before := s.pool.pids()
		retired := s.pool.retiredLarge.Load()
		run(tc.code, tc.req)
		after := s.pool.pids()
		if len(after) != 0 {
			t.Errorf("%s: the worker stayed idle (%v, before %v)", name, after, before)
		}
		if got := s.pool.retiredLarge.Load(); got != retired+1 {
			t.Errorf("%s: retired after large runs = %d, want %d", name, got, retired+1)
		}
		run(`module.exports = () => 3`, nil)
		for pid := range s.pool.pids() {
			if before[pid] {
				t.Errorf("%s: the next run used the same worker %d", name, pid)
			}
		}
	}
}
