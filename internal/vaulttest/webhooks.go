package vaulttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// Hit is one request a HookReceiver got.
type Hit struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// HookReceiver is a loopback webhook receiver that answers with answer (given
// the 1-based number of the request), and keeps every request.
type HookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []Hit
	answer func(n int, w http.ResponseWriter)
}

// NewHookReceiver starts a HookReceiver, closed when the test ends.
func NewHookReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *HookReceiver {
	r := &HookReceiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hits = append(r.hits, Hit{req.Header.Clone(), body, time.Now()})
		n := len(r.hits)
		r.mu.Unlock()
		r.answer(n, w)
	}))
	t.Cleanup(r.Close)
	return r
}

// Got is a copy of every request received so far.
func (r *HookReceiver) Got() []Hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Hit(nil), r.hits...)
}

// DeliveryEnv is a Vault on the real clock (retries come due by
// themselves) with a short schedule, and options adjusted by adjust.
func DeliveryEnv(t *testing.T, adjust ...func(*tokenvault.Options)) *Env {
	return NewEnvOn(t, memory.New(), append([]func(*tokenvault.Options){func(o *tokenvault.Options) {
		o.Now = time.Now
		o.Webhooks.Schedule = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond,
			20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}
		o.Webhooks.PollInterval = 20 * time.Millisecond
		o.Webhooks.Timeout = 5 * time.Second
	}}, adjust...)...)
}

// waitFor polls cond for up to 20 s.
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
