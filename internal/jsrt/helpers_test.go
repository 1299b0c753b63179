package jsrt

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"
)

// mustCompile compiles code with r, or with r's options and a generous
// timeout when r's own is short: Compile runs the module body, and a test
// that gives r a short timeout for Run must not fail to compile on a busy
// machine.
func mustCompile(t testing.TB, r *Runtime, code string) *Program {
	t.Helper()
	if r.opts.Timeout < 10*time.Second {
		opts := r.opts
		opts.Timeout = time.Minute
		r = New(opts)
	}
	p, err := r.Compile(code)
	if err != nil {
		t.Fatalf("Compile(%q) = %v", code, err)
	}
	return p
}

// run compiles and runs code with req and client.
func run(t testing.TB, r *Runtime, code string, req map[string]any, client Client) (any, error) {
	t.Helper()
	return r.Run(context.Background(), mustCompile(t, r, code), req, Host{Client: client})
}

// runOK runs code and fails the test on error.
func runOK(t testing.TB, r *Runtime, code string, req map[string]any, client Client) any {
	t.Helper()
	out, err := run(t, r, code, req, client)
	if err != nil {
		t.Fatalf("Run(%q) = %v", code, err)
	}
	return out
}

// runErr runs code and returns its *Error, failing the test when there is
// none.
func runErr(t testing.TB, r *Runtime, code string, req map[string]any, client Client) *Error {
	t.Helper()
	out, err := run(t, r, code, req, client)
	var je *Error
	if !errors.As(err, &je) {
		t.Fatalf("Run(%q) = %v, %v; want an *Error", code, out, err)
	}
	checkSafe(t, je.Message)
	checkSafe(t, je.Error())
	return je
}

// hostDetail matches what must never reach code or callers: Go stack
// frames, Go function names, file paths.
var hostDetail = regexp.MustCompile(`goroutine |\.go:\d|github\.com/|/work/|/root/|/home/|/tmp/|runtime\.|panic:|\(\*session\)`)

func checkSafe(t testing.TB, msg string) {
	t.Helper()
	if hostDetail.MatchString(msg) {
		t.Errorf("message %q carries host detail", msg)
	}
}

// checkWorks fails the test unless r still runs code normally: used after
// each limit triggers. The run gets a minute, whatever r's timeout.
func checkWorks(t testing.TB, r *Runtime) {
	t.Helper()
	p := mustCompile(t, r, `module.exports = async (req) => ({ok: req.n + 1})`)
	out, err := r.Run(WithTimeout(t.Context(), time.Minute), p, map[string]any{"n": 41}, Host{})
	if err != nil {
		t.Fatalf("after the limit: Run = %v", err)
	}
	if m, _ := out.(map[string]any); m == nil || m["ok"] != 42.0 {
		t.Fatalf("after the limit: Run = %#v, want {ok: 42}", out)
	}
}
