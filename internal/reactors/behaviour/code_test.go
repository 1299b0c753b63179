package reactors_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// records is a slog handler that keeps what it is given.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// TestConsoleReachesTheLogger: console output of code in a worker (or in
// process) is dropped by default, since tenant code holds detokenized
// data; with LogCodeConsole it reaches the host's Logger at debug level,
// with the tenant and the reactor.
func TestConsoleReachesTheLogger(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		h := &records{}
		e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Logger, o.Code.TrustedInProcess = slog.New(h), inProcess })
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async (req) => { console.log("charging", req.args.card); return {raw: 1} }`})
		if _, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"card": vaulttest.Visa}}); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		for _, rec := range h.recs {
			if strings.Contains(rec.Message, vaulttest.Visa) {
				t.Errorf("in process %v: the console line %q reached the logger without LogCodeConsole", inProcess, rec.Message)
			}
		}
		h.mu.Unlock()
	}

	h := &records{}
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Logger, o.Code.LogConsole = slog.New(h), true })
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async () => { console.log("charging", 42); return {raw: 1} }`})
	if _, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{}); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rec := range h.recs {
		if rec.Message != "charging 42" {
			continue
		}
		attrs := map[string]string{}
		rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
		if rec.Level != slog.LevelDebug || attrs["tenant"] != e.Boot.Tenant.ID || attrs["reactor"] != r.ID || attrs["source"] != "console.log" {
			t.Errorf("console line %v %v, want debug with tenant, reactor and source", rec.Level, attrs)
		}
		return
	}
	t.Error("the console line did not reach the logger")
}

// TestTrustedCodeInProcess: the opt-in for trusted code runs it without
// workers, with the same results and errors.
func TestTrustedCodeInProcess(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.TrustedInProcess = true })
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async (req) => ({raw: req.args.n * 2})`})
	res, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"n": 21}})
	if err != nil || res.Raw != 42.0 {
		t.Fatalf("InvokeReactor = %v, %v; want 42", res, err)
	}
	_, err = e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "bad", Code: "module.exports = ("})
	if tokenvault.ErrorKind(err) != tokenvault.Invalid || !strings.Contains(err.Error(), "code") {
		t.Errorf("syntax error in process = %v, want Invalid on code", err)
	}
}
