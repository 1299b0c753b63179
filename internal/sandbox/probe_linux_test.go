package sandbox

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// probe asks a fresh worker of s to try what, and returns what happened.
func probe(t *testing.T, s *Sandbox, what string) probeResult {
	t.Helper()
	w, err := s.pool.get()
	if err != nil {
		t.Fatal(err)
	}
	defer s.pool.put(w, false)
	if !w.seccomp {
		t.Fatal("the worker runs without its seccomp filter")
	}
	var res probeResult
	if err := writeFrame(w.w, frameProbe, probeRequest{What: what}); err != nil {
		t.Fatal(err)
	}
	if err := w.expect(frameProbed, &res); err != nil {
		t.Fatalf("probe %s: %v", what, err)
	}
	return res
}

// TestWorkerLimitsHoldFromInside proves each limit from the worker
// process itself, not from JavaScript: the Go code of the worker tries
// what tenant code must never reach, and the OS refuses.
func TestWorkerLimitsHoldFromInside(t *testing.T) {
	s := newSandbox(t, Options{MemoryBytes: 128 << 20})
	for _, what := range []string{"open", "create", "socket", "exec", "raise-limit"} {
		t.Run(what, func(t *testing.T) {
			res := probe(t, s, what)
			if res.Error == "" {
				t.Fatalf("the worker could %s", what)
			}
			if !strings.Contains(res.Error, "not permitted") {
				t.Errorf("%s failed with %q, want EPERM from the filter", what, res.Error)
			}
		})
	}
	t.Run("env", func(t *testing.T) {
		if env := probe(t, s, "env").Detail; env != "" {
			t.Errorf("environment = %q, want empty", env)
		}
	})
	t.Run("fds", func(t *testing.T) {
		// 0 and 1 are the pipes, 2 standard error; the frame stream is 1
		// duplicated (a pipe); the rest is the Go runtime's own (epoll,
		// its eventfd) and the directory listed. Whatever the test
		// process inherited from its parent is closed.
		for _, fd := range strings.Fields(probe(t, s, "fds").Detail) {
			n, kind, _ := strings.Cut(fd, "=")
			switch {
			case n <= "2" && len(n) == 1, kind == "pipe", kind == "[eventpoll]", kind == "[eventfd]", kind == "gone":
			default:
				t.Errorf("descriptor %s is open in the worker", fd)
			}
		}
	})
	t.Run("rlimits", func(t *testing.T) {
		got := probe(t, s, "rlimits").Detail
		for _, want := range []string{"core=0", "fsize=0", "cpu=960"} {
			if !strings.Contains(got, want) {
				t.Errorf("rlimits = %q, want %s", got, want)
			}
		}
		if strings.Contains(got, "data=18446744073709551615") || strings.Contains(got, "as=18446744073709551615") || !strings.Contains(got, "as=") {
			t.Errorf("rlimits = %q: no memory or address-space limit", got)
		}
	})
}

// TestHugeFrameIsRefusedFromItsHeader: a worker that claims a 2 GiB frame
// is refused before the Vault allocates for it.
func TestHugeFrameIsRefusedFromItsHeader(t *testing.T) {
	s := newSandbox(t, Options{})
	w, err := s.pool.get()
	if err != nil {
		t.Fatal(err)
	}
	defer s.pool.put(w, false)
	if err := writeFrame(w.w, frameProbe, probeRequest{What: "huge-frame"}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = w.expect(frameProbed, &probeResult{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("a 2 GiB frame = %v, want errFrameTooLarge", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("reading it allocated %d bytes", grew)
	}
}
