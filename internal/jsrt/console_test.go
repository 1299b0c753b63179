package jsrt

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a slog.Handler that keeps records.
type recorder struct {
	mu    sync.Mutex
	level slog.Level
	lines []string // "LEVEL source message"
}

func (h *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recorder) Handle(_ context.Context, r slog.Record) error {
	source := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "source" {
			source = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r.Level.String()+" "+source+" "+r.Message)
	return nil
}
func (h *recorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recorder) WithGroup(string) slog.Handler      { return h }

func TestConsole(t *testing.T) {
	h := &recorder{level: slog.LevelDebug}
	r := New(Options{Logger: slog.New(h)})
	got := runOK(t, r, `module.exports = async (req) => {
		console.log('hello', 1, true, null, undefined, {a: [1]}, [2]);
		console.info('info'); console.warn('warn'); console.error(new TypeError('bad')); console.debug('debug');
		console.log({f() {}}, Symbol('s'), () => 1);
		return 'result';
	}`, nil, nil)
	if got != "result" {
		t.Errorf("result = %v; console output must not reach it", got)
	}
	want := []string{
		`DEBUG console.log hello 1 true null undefined {"a":[1]} [2]`,
		`DEBUG console.info info`,
		`DEBUG console.warn warn`,
		`DEBUG console.error TypeError: bad`,
		`DEBUG console.debug debug`,
		`DEBUG console.log [object Object] Symbol(s) [Function]`,
	}
	if diff := cmp.Diff(want, h.lines); diff != "" {
		t.Errorf("log mismatch (-want +got):\n%s", diff)
	}
}

func TestConsoleBounds(t *testing.T) {
	h := &recorder{level: slog.LevelDebug}
	r := New(Options{Logger: slog.New(h)})
	runOK(t, r, `module.exports = () => { console.log('x'.repeat(20000)); for (let i = 0; i < 2000; i++) console.log(i) }`, nil, nil)
	if len(h.lines) != maxLogLines+1 {
		t.Fatalf("%d lines logged, want %d", len(h.lines), maxLogLines+1)
	}
	if first := h.lines[0]; len(first) > maxLogLineBytes+100 || !strings.HasSuffix(first, "x…") {
		t.Errorf("a long line was not cut: %d bytes", len(first))
	}
	if last := h.lines[len(h.lines)-1]; last != "DEBUG console.log (console output truncated)" {
		t.Errorf("last line = %q", last)
	}

	// Nothing is formatted when debug is off, and a nil Logger discards.
	quiet := &recorder{level: slog.LevelInfo}
	runOK(t, New(Options{Logger: slog.New(quiet)}), `module.exports = () => console.log('x')`, nil, nil)
	if len(quiet.lines) != 0 {
		t.Errorf("logged at info level: %v", quiet.lines)
	}
	if got := runOK(t, New(Options{}), `module.exports = () => { console.log('x'); return 1 }`, nil, nil); got != 1.0 {
		t.Errorf("nil Logger: %v", got)
	}
}
