package cli

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/syncbuf"
)

// TestLineBufferHoldsLinesUntilClose: lines are not written one by one;
// Close writes them, in order, and later lines go straight through.
func TestLineBufferHoldsLinesUntilClose(t *testing.T) {
	var out syncbuf.Buffer
	b := newLineBuffer(&out, time.Hour, 1<<20)
	for i := range 3 {
		if n, err := fmt.Fprintf(b, "line %d\n", i); err != nil || n != 7 {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if out.String() != "" {
		t.Fatalf("written before Close: %q", out.String())
	}
	b.Close()
	fmt.Fprintf(b, "after\n")
	if got, want := out.String(), "line 0\nline 1\nline 2\nafter\n"; got != want {
		t.Fatalf("written %q, want %q", got, want)
	}
}

// TestLineBufferWritesWhenFull: reaching flushSize writes everything
// waiting at once, in one Write.
func TestLineBufferWritesWhenFull(t *testing.T) {
	var w countingWriter
	b := newLineBuffer(&w, time.Hour, 20)
	fmt.Fprintf(b, "0123456789\n") // 11 bytes: kept
	if w.writes != 0 {
		t.Fatalf("%d writes before the buffer is full", w.writes)
	}
	fmt.Fprintf(b, "abcdefghij\n") // 22: written
	if w.writes != 1 || w.String() != "0123456789\nabcdefghij\n" {
		t.Fatalf("after filling: %d writes of %q", w.writes, w.String())
	}
	b.Close()
	if w.writes != 1 {
		t.Fatalf("Close of an empty buffer wrote: %d writes", w.writes)
	}
}

// TestLineBufferWritesAfterDelay: a quiet server's lines do not wait for
// the next request, nor for Close.
func TestLineBufferWritesAfterDelay(t *testing.T) {
	var out syncbuf.Buffer
	b := newLineBuffer(&out, 10*time.Millisecond, 1<<20)
	defer b.Close()
	fmt.Fprintf(b, "first\n")
	waitFor(t, func() bool { return out.String() == "first\n" })
	fmt.Fprintf(b, "second\n") // the timer is armed again for the next line
	waitFor(t, func() bool { return out.String() == "first\nsecond\n" })
}

// TestLineBufferConcurrentLines: lines written at once from many
// goroutines all arrive whole (run with -race).
func TestLineBufferConcurrentLines(t *testing.T) {
	var out syncbuf.Buffer
	b := newLineBuffer(&out, time.Millisecond, 256)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(b, "goroutine=%d line=%03d end\n", g, i)
			}
		})
	}
	wg.Wait()
	b.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "goroutine=%d line=%d end", &g, &i); err != nil {
			t.Fatalf("a split or mixed line %q: %v", l, err)
		}
	}
}

// countingWriter counts Writes; not for concurrent use.
type countingWriter struct {
	strings.Builder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// waitFor polls cond for up to 10 s: long enough for a timer on a busy
// machine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
	}
}
