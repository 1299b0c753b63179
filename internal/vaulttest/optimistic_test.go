package vaulttest_test

import (
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// Creating, reading and detokenizing tokens run optimistically on stores
// one process holds (optimistic.go): these tests race such calls against
// each other and against the writes that must stop them, and require what
// a serial order would give.

func TestConcurrentCustomIDsOneWins(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		creator := e.App(t, tokenvault.Private, "token:create", "token:read")
		const n = 32
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{ID: "order:1", Type: "token", Data: i})
			})
		}
		wg.Wait()
		created := 0
		for _, err := range errs {
			if err == nil {
				created++
				continue
			}
			vaulttest.WantKind(t, "a taken id", err, tokenvault.Conflict)
		}
		if created != 1 {
			t.Fatalf("%d concurrent creates of one custom id succeeded, want 1", created)
		}
		page, err := e.V.ListTokens(ctx, creator.Key, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Pagination.TotalItems != 1 {
			t.Errorf("%d tokens exist, want 1", page.Pagination.TotalItems)
		}
	})
}

// TestRevokedKeyStopsConcurrentCalls revokes a key while calls with it
// run: once the revocation has returned, no call with the key may succeed.
func TestRevokedKeyStopsConcurrentCalls(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, "token:create", "token:read")
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		done := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				<-done
				for range 20 {
					var err error
					if w%2 == 0 {
						_, err = e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "y"})
					} else {
						_, err = e.V.GetToken(ctx, app.Key, tok.ID)
					}
					if err == nil {
						t.Errorf("a call with a key revoked before it began succeeded")
						return
					}
				}
			})
		}
		var before sync.WaitGroup
		for w := range 8 {
			before.Go(func() {
				for range 20 {
					if w%2 == 0 {
						e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "y"})
					} else {
						e.V.GetToken(ctx, app.Key, tok.ID)
					}
				}
			})
		}
		if err := e.V.DeleteApplication(ctx, e.Mgmt, app.ID); err != nil {
			t.Fatal(err)
		}
		close(done)
		wg.Wait()
		before.Wait()
	})
}
