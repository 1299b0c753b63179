package vaulttest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func countTokens(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential) int {
	t.Helper()
	page, err := v.ListTokens(context.Background(), key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Pagination.TotalItems
}

// TestIdempotentReplays: a repeat with the same key and request returns
// the first response without running again; another request under the key
// is Unprocessable; another caller's same key is its own.
func TestIdempotentReplays(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, "token:create", "token:read")
		runs := 0
		first, replayed, err := vaulttest.IdemTokenize(t, e.V, app.Key, "order-1", "secret value", &runs)
		if err != nil || replayed || runs != 1 {
			t.Fatalf("first Idempotent = %v, replayed %v, %d runs; want a run", err, replayed, runs)
		}
		again, replayed, err := vaulttest.IdemTokenize(t, e.V, app.Key, "order-1", "secret value", &runs)
		if err != nil || !replayed || runs != 1 {
			t.Fatalf("repeat Idempotent = %v, replayed %v, %d runs; want the kept response and no run", err, replayed, runs)
		}
		if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header["Content-Type"][0] != "application/json" {
			t.Errorf("repeat = %d %s %v, want %d %s", again.Status, again.Body, again.Header, first.Status, first.Body)
		}
		if n := countTokens(t, e.V, app.Key); n != 1 {
			t.Errorf("%d tokens after a repeat, want 1", n)
		}

		_, _, err = vaulttest.IdemTokenize(t, e.V, app.Key, "order-1", "another value", &runs)
		vaulttest.WantKind(t, "the same key with another body", err, tokenvault.Unprocessable)
		_, _, err = e.V.Idempotent(context.Background(), app.Key, "order-1",
			tokenvault.IdempotentRequest{Operation: "POST /tokens", Body: []byte(`{"type":"token","data":"secret value"}`)},
			func(context.Context) (*tokenvault.IdempotentResponse, error) { t.Error("ran"); return nil, nil })
		vaulttest.WantKind(t, "the same key on another operation", err, tokenvault.Unprocessable)

		// Another application, and another tenant, with the same key.
		other := e.App(t, tokenvault.Private, "token:create", "token:read")
		if _, replayed, err := vaulttest.IdemTokenize(t, e.V, other.Key, "order-1", "secret value", &runs); err != nil || replayed || runs != 2 {
			t.Errorf("another application's same key = %v, replayed %v, %d runs; want a run of its own", err, replayed, runs)
		}
		boot := e.Tenant(t, "Other")
		otherTenant, err := e.V.CreateApplication(context.Background(), boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "p", Type: tokenvault.Private, Permissions: []string{"token:create"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, replayed, err := vaulttest.IdemTokenize(t, e.V, otherTenant.Key, "order-1", "secret value", &runs); err != nil || replayed || runs != 3 {
			t.Errorf("another tenant's same key = %v, replayed %v, %d runs; want a run of its own", err, replayed, runs)
		}

		// Unauthenticated keys get nothing kept.
		_, _, err = vaulttest.IdemTokenize(t, e.V, "key_unknown", "order-1", "secret value", &runs)
		vaulttest.WantKind(t, "Idempotent with an unknown key", err, tokenvault.Unauthenticated)
	})
}

// TestIdempotentWindowAndSweep: after IdempotencyWindow a repeat runs
// again, and the sweeper removes the record.
func TestIdempotentWindowAndSweep(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, "token:create", "token:read")
		runs := 0
		if _, _, err := vaulttest.IdemTokenize(t, e.V, app.Key, "k", "v", &runs); err != nil {
			t.Fatal(err)
		}
		records := func() int {
			n := 0
			for k := range vaulttest.Dump(t, e.Store) {
				if strings.Contains(k, "/idempotency/") { // the record and its expiry entry
					n++
				}
			}
			return n
		}
		if n := records(); n != 2 {
			t.Fatalf("%d idempotency entries, want 2 (the record, its expiry)", n)
		}
		e.Clock.Advance(tokenvault.IdempotencyWindow - time.Second)
		if _, replayed, _ := vaulttest.IdemTokenize(t, e.V, app.Key, "k", "v", &runs); !replayed {
			t.Errorf("a repeat just inside the window ran again")
		}
		if n, err := e.V.Sweep(context.Background()); err != nil || n != 0 {
			t.Errorf("Sweep inside the window = %d, %v; want 0", n, err)
		}
		e.Clock.Advance(time.Second)
		if n, err := e.V.Sweep(context.Background()); err != nil || n != 1 {
			t.Errorf("Sweep after the window = %d, %v; want 1", n, err)
		}
		if n := records(); n != 0 {
			t.Errorf("%d idempotency entries after the sweep, want 0", n)
		}
		if _, replayed, err := vaulttest.IdemTokenize(t, e.V, app.Key, "k", "v", &runs); err != nil || replayed || runs != 2 {
			t.Errorf("a repeat after the window = %v, replayed %v, %d runs; want a new run", err, replayed, runs)
		}
	})
}

// TestIdempotentOutcomes: errors, 5xx and 429 release the key (a retry
// runs again); 2xx and other 4xx responses are kept.
func TestIdempotentOutcomes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.App(t, tokenvault.Private, "token:create")
	for _, tc := range []struct {
		name string
		resp *tokenvault.IdempotentResponse
		err  error
		kept bool
	}{
		{"error", nil, errors.New("boom"), false},
		{"status 500", &tokenvault.IdempotentResponse{Status: 500}, nil, false},
		{"status 503", &tokenvault.IdempotentResponse{Status: 503}, nil, false},
		{"status 429", &tokenvault.IdempotentResponse{Status: 429}, nil, false},
		{"status 400", &tokenvault.IdempotentResponse{Status: 400, Body: []byte(`{"status":400}`)}, nil, true},
		{"status 409", &tokenvault.IdempotentResponse{Status: 409}, nil, true},
		{"status 200", &tokenvault.IdempotentResponse{Status: 200, Body: []byte("ok")}, nil, true},
		{"status 204", &tokenvault.IdempotentResponse{Status: 204}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			call := func() (*tokenvault.IdempotentResponse, bool, error) {
				return e.V.Idempotent(context.Background(), app.Key, "outcome "+tc.name, tokenvault.IdempotentRequest{Operation: "op"},
					func(context.Context) (*tokenvault.IdempotentResponse, error) { runs++; return tc.resp, tc.err })
			}
			resp, replayed, err := call()
			if err != tc.err || replayed || resp != tc.resp {
				t.Fatalf("first call = %v, %v, %v; want run's own %v, %v", resp, replayed, err, tc.resp, tc.err)
			}
			resp, replayed, err = call()
			if tc.kept {
				if err != nil || !replayed || runs != 1 || resp.Status != tc.resp.Status || !bytes.Equal(resp.Body, tc.resp.Body) {
					t.Errorf("repeat = %+v, replayed %v, %v, %d runs; want the kept response", resp, replayed, err, runs)
				}
			} else if replayed || runs != 2 {
				t.Errorf("repeat replayed %v after %d runs; want the key released and a second run", replayed, runs)
			}
		})
	}

	// A panic releases the key too.
	func() {
		defer func() { recover() }()
		e.V.Idempotent(context.Background(), app.Key, "panics", tokenvault.IdempotentRequest{},
			func(context.Context) (*tokenvault.IdempotentResponse, error) { panic("boom") })
	}()
	ran := false
	if _, _, err := e.V.Idempotent(context.Background(), app.Key, "panics", tokenvault.IdempotentRequest{},
		func(context.Context) (*tokenvault.IdempotentResponse, error) {
			ran = true
			return &tokenvault.IdempotentResponse{Status: 201}, nil
		}); err != nil || !ran {
		t.Errorf("after a panicking run: %v, ran %v; want a new run", err, ran)
	}
}

// TestIdempotentInProgress: a repeat while the first runs is Conflict; a
// claim whose lease ran out (its instance crashed) is taken over.
func TestIdempotentInProgress(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.App(t, tokenvault.Private, "token:create")
	req := tokenvault.IdempotentRequest{Operation: "op", Body: []byte("b")}
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _, err := e.V.Idempotent(context.Background(), app.Key, "slow", req,
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				close(started)
				<-release
				return &tokenvault.IdempotentResponse{Status: 201, Body: []byte("first")}, nil
			})
		if err != nil {
			t.Errorf("first call: %v", err)
		}
	})
	<-started
	noRun := func(context.Context) (*tokenvault.IdempotentResponse, error) {
		t.Error("a repeat ran while the first was running")
		return nil, nil
	}
	_, _, err := e.V.Idempotent(context.Background(), app.Key, "slow", req, noRun)
	vaulttest.WantKind(t, "a repeat while the first runs", err, tokenvault.Conflict)

	// The lease ends: the claim is taken over and run again.
	e.Clock.Advance(tokenvault.IdempotencyLease)
	resp, replayed, err := e.V.Idempotent(context.Background(), app.Key, "slow", req,
		func(context.Context) (*tokenvault.IdempotentResponse, error) {
			return &tokenvault.IdempotentResponse{Status: 201, Body: []byte("second")}, nil
		})
	if err != nil || replayed || string(resp.Body) != "second" {
		t.Fatalf("after the lease = %v, replayed %v, %v; want a new run", resp, replayed, err)
	}
	close(release)
	wg.Wait()
	// The first run lost its claim: the taker's response is kept.
	resp, replayed, err = e.V.Idempotent(context.Background(), app.Key, "slow", req, noRun)
	if err != nil || !replayed || string(resp.Body) != "second" {
		t.Errorf("repeat = %v, replayed %v, %v; want the second run's response", resp, replayed, err)
	}
}

// TestIdempotencyKeyForm: keys are 1 to 255 printable ASCII characters.
func TestIdempotencyKeyForm(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.App(t, tokenvault.Private, "token:create")
	for _, k := range []string{"", strings.Repeat("k", 256), "line\nbreak", "tab\t", "caf\u00e9"} {
		_, _, err := e.V.Idempotent(context.Background(), app.Key, k, tokenvault.IdempotentRequest{},
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				t.Errorf("ran with key %q", k)
				return nil, nil
			})
		vaulttest.WantKind(t, "Idempotent with a malformed key", err, tokenvault.Invalid)
	}
	for _, k := range []string{"a", strings.Repeat("k", 255), "order 42/ok~"} {
		if _, _, err := e.V.Idempotent(context.Background(), app.Key, k, tokenvault.IdempotentRequest{},
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				return &tokenvault.IdempotentResponse{Status: 200}, nil
			}); err != nil {
			t.Errorf("Idempotent(key %q) = %v", k, err)
		}
	}
}

// TestIdempotencyRecordsSealed: neither the idempotency key nor the kept
// response (which holds token data) is in the store in plaintext.
func TestIdempotencyRecordsSealed(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, "token:create")
		secretBody := "4111-secret-response-body"
		_, _, err := e.V.Idempotent(context.Background(), app.Key, "my-idempotency-key-xyz", tokenvault.IdempotentRequest{Operation: "op", Body: []byte("request-body-abc")},
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				return &tokenvault.IdempotentResponse{Status: 201, Body: []byte(secretBody)}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for k, v := range vaulttest.Dump(t, e.Store) {
			if strings.Contains(k, "/idempotency/") {
				found = true
			}
			for _, secret := range []string{"my-idempotency-key-xyz", secretBody, "request-body-abc"} {
				if strings.Contains(k, secret) || bytes.Contains(v, []byte(secret)) {
					t.Errorf("store entry %s holds %q in plaintext", k, secret)
				}
			}
		}
		if !found {
			t.Error("no idempotency record in the store")
		}
	})
}

// TestIdempotentPublicAndGrants: a public application's requests run each
// time (its key is every end user's, so a kept answer would go to whoever
// repeats the Idempotency-Key); a repeat after the caller's grants changed
// is Unprocessable, not the kept answer.
func TestIdempotentPublicAndGrants(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		pub := e.App(t, tokenvault.Public, "token:create")
		runs := 0
		for range 2 {
			if _, replayed, err := vaulttest.IdemTokenize(t, e.V, pub.Key, "order-1", "v", &runs); err != nil || replayed {
				t.Fatalf("a public key's Idempotent = %v, replayed %v; want a run", err, replayed)
			}
		}
		if runs != 2 {
			t.Errorf("a public key's request ran %d times for two calls, want 2", runs)
		}

		app := e.App(t, tokenvault.Private, "token:create", "token:read")
		if _, _, err := vaulttest.IdemTokenize(t, e.V, app.Key, "order-2", "w", &runs); err != nil {
			t.Fatal(err)
		}
		if _, err := e.V.UpdateApplication(context.Background(), e.Mgmt, app.ID, tokenvault.UpdateApplicationRequest{
			Name: app.Name, Permissions: []string{"token:create"}}); err != nil {
			t.Fatal(err)
		}
		before := runs
		_, _, err := vaulttest.IdemTokenize(t, e.V, app.Key, "order-2", "w", &runs)
		vaulttest.WantKind(t, "a repeat after the grants changed", err, tokenvault.Unprocessable)
		if runs != before {
			t.Errorf("the refused repeat ran the request")
		}
	})
}
