package reactors

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// newAsync is an Async posting to a test receiver that answers status,
// recording every body and SVC-Signature it gets and every outcome.
func newAsync(t *testing.T, status int, secretErr error) (*Async, *receiver) {
	t.Helper()
	r := &receiver{status: status}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	a := &Async{Background: ctx, HTTPClient: srv.Client(), Backoff: time.Millisecond, Now: time.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Secret: func(context.Context, string) ([]byte, error) { return make([]byte, CallbackSecretSize), secretErr },
		Delivered: func(o CallbackOutcome, n int) {
			r.mu.Lock()
			r.outcomes = append(r.outcomes, o)
			r.attempts = append(r.attempts, n)
			r.mu.Unlock()
		}}
	r.url = srv.URL
	t.Cleanup(func() { a.Stop(); cancel(); a.Wait() })
	return a, r
}

type receiver struct {
	url      string
	status   int
	mu       sync.Mutex
	bodies   []string
	sigs     []string
	outcomes []CallbackOutcome
	attempts []int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.sigs = append(r.sigs, req.Header.Get(CallbackSignatureHeader))
	r.mu.Unlock()
	w.WriteHeader(r.status)
}

func TestAsyncDeliversSignedCallbacks(t *testing.T) {
	t.Parallel()
	a, r := newAsync(t, http.StatusNoContent, nil)
	ended := make(chan error, 2)
	cb := Callback{InvocationID: "i1", ReactorID: "r1", TenantID: "t1"}
	if err := a.Start(cb, r.url, 5*time.Second, func(context.Context) (*Response, error) { return &Response{Raw: "ok"}, nil },
		func(err error) { ended <- err }); err != nil {
		t.Fatalf("Start = %v", err)
	}
	cb.InvocationID = "i2"
	if err := a.Start(cb, r.url, 5*time.Second, func(context.Context) (*Response, error) { return nil, unit.Errorf(unit.Invalid, "bad") },
		func(err error) { ended <- err }); err != nil {
		t.Fatalf("Start = %v", err)
	}
	a.Stop()
	a.Wait()
	if err := a.Start(cb, r.url, time.Second, nil, nil); unit.ErrorKind(err) != unit.Unavailable {
		t.Errorf("Start after Stop = %v, want Unavailable", err)
	}
	if e1, e2 := <-ended, <-ended; (e1 == nil) == (e2 == nil) {
		t.Errorf("ended heard %v and %v, want one nil and one error", e1, e2)
	}
	if len(r.bodies) != 2 {
		t.Fatalf("receiver got %d callbacks, want 2", len(r.bodies))
	}
	succeeded, failed := 0, 0
	for i, b := range r.bodies {
		if want := SignCallback(make([]byte, CallbackSecretSize), []byte(b)); r.sigs[i] != want {
			t.Errorf("callback %s signed %q, want %q", b, r.sigs[i], want)
		}
		switch {
		case strings.Contains(b, `"status":"succeeded","result":{"raw":"ok"}`):
			succeeded++
		case strings.Contains(b, `"status":"failed","error":{`):
			failed++
		}
	}
	if succeeded != 1 || failed != 1 {
		t.Errorf("callbacks %q, want one succeeded with its result and one failed with its error", r.bodies)
	}
	for i, o := range r.outcomes {
		if o != CallbackDelivered || r.attempts[i] != 1 {
			t.Errorf("delivery %d ended %s after %d attempts, want delivered after 1", i, o, r.attempts[i])
		}
	}
	if running, delivering := a.Stats(); running != 0 || delivering != 0 {
		t.Errorf("Stats after Wait = %d, %d; want 0, 0", running, delivering)
	}
}

func TestAsyncGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		status    int
		secretErr error
		want      CallbackOutcome
		attempts  int
	}{
		{"receiver fails", http.StatusInternalServerError, nil, CallbackFailed, callbackAttempts},
		{"no secret", http.StatusOK, errors.New("keyring unreadable"), CallbackNotSent, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, r := newAsync(t, tc.status, tc.secretErr)
			err := a.Start(Callback{InvocationID: "i1", TenantID: "t1"}, r.url, 5*time.Second,
				func(context.Context) (*Response, error) { return &Response{}, nil }, func(error) {})
			if err != nil {
				t.Fatalf("Start = %v", err)
			}
			a.Wait()
			if len(r.outcomes) != 1 || r.outcomes[0] != tc.want || r.attempts[0] != tc.attempts {
				t.Errorf("deliveries ended %v after %v attempts, want %s after %d", r.outcomes, r.attempts, tc.want, tc.attempts)
			}
			if len(r.bodies) != tc.attempts {
				t.Errorf("receiver got %d POSTs, want %d", len(r.bodies), tc.attempts)
			}
		})
	}
}
