package sessions_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestSessionFloodLocksNobodyOut: 1,100 concurrent session creations with
// one public key from one address do not stop a creation from another
// address, nor an in-process one, during the flood or after it; a
// legitimate session created during the flood can still be authorized
// after it; and the sessions waiting for authorization stay within the
// caps. With the default session rate (the flood is mostly refused) and
// with none (the per-address cap evicts the flood's own oldest).
func TestSessionFloodLocksNobodyOut(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		for _, tc := range []struct {
			name string
			rate float64
		}{{"default rate", 0}, {"no rate", -1}} {
			t.Run("store="+sk.Name+"/"+tc.name, func(t *testing.T) {
				testSessionFlood(t, sk, tc.rate)
			})
		}
	}
}

func testSessionFlood(t *testing.T, sk vaulttest.StoreKind, rate float64) {
	s := sk.Open(t)
	e := vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = rate })
	pub := e.App(t, tokenvault.Public, "token:create").Key
	authz := e.App(t, tokenvault.Private, "token:read")
	const flood = 1100
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 32 {
		wg.Go(func() {
			<-start
			for range flood / 32 {
				e.V.CreateSession(vaulttest.From("203.0.113.66"), pub)
			}
		})
	}
	for range flood % 32 {
		e.V.CreateSession(vaulttest.From("203.0.113.66"), pub)
	}
	close(start)
	var during []*tokenvault.Session
	for i := range 3 {
		legit, err := e.V.CreateSession(vaulttest.From(fmt.Sprint("198.51.100.", i+1)), pub)
		if err != nil {
			t.Fatalf("a creation from another address during the flood: %v", err)
		}
		inProcess, err := e.V.CreateSession(ctx, pub)
		if err != nil {
			t.Fatalf("an in-process creation during the flood: %v", err)
		}
		during = append(during, legit, inProcess)
	}
	wg.Wait()
	if _, err := e.V.CreateSession(vaulttest.From("198.51.100.9"), pub); err != nil {
		t.Errorf("a creation from another address after the flood: %v", err)
	}
	if _, err := e.V.CreateSession(ctx, pub); err != nil {
		t.Errorf("an in-process creation after the flood: %v", err)
	}
	for i, s := range during {
		err := e.V.AuthorizeSession(ctx, authz.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
		if err != nil {
			t.Errorf("authorizing legitimate session %d after the flood: %v", i, err)
		}
	}
	perApp, perAddress := vaulttest.PendingEntries(t, s)
	// The flood's address holds at most its cap (its burst when rate
	// limited); the two legitimate ones created after it wait too.
	max := tokenvault.DefaultMaxPendingSessionsPerAddress + 2
	if rate == 0 {
		max = tokenvault.DefaultSessionsPerApplication*tokenvault.SessionBurstSeconds + 2
	}
	if perApp > max || perAddress != perApp {
		t.Errorf("%d sessions waiting (%d by address) after the flood, want at most %d", perApp, perAddress, max)
	}
}

// TestSessionFloodFromManyAddressesKeepsVictims: a flood of sessions from
// addresses A..Z (26 addresses, 50 each, one public key) never removes a
// victim's sessions waiting for authorization: its backend authorizes
// every one after the flood. Each flooding address holds at most its own
// cap (it replaces its own oldest); with a ceiling the flood fills, its
// creations past it are refused (RateLimited, with when to try again),
// the victim's creation too, until sessions are authorized or expire.
func TestSessionFloodFromManyAddressesKeepsVictims(t *testing.T) {
	const victim = "198.51.100.7"
	for _, sk := range vaulttest.StoreKinds {
		for _, tc := range []struct {
			name    string
			ceiling int
		}{{"ceiling above the flood's share", 0}, {"ceiling the flood fills", 40}} {
			t.Run("store="+sk.Name+"/"+tc.name, func(t *testing.T) {
				s := sk.Open(t)
				e := vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) {
					o.Limits.SessionsPerApplication, o.Limits.MaxPendingSessionsPerApplication, o.Limits.MaxPendingSessionsPerAddress = -1, tc.ceiling, 5
				})
				pub := e.App(t, tokenvault.Public, "token:create").Key
				authz := e.App(t, tokenvault.Private, "token:read")
				authorize := func(s *tokenvault.Session) error {
					return e.V.AuthorizeSession(ctx, authz.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
				}
				var pending []*tokenvault.Session
				for range 3 {
					s, err := e.V.CreateSession(vaulttest.From(victim), pub)
					if err != nil {
						t.Fatal(err)
					}
					pending = append(pending, s)
				}
				refused := 0
				for a := range 26 {
					for i := range 50 {
						_, err := e.V.CreateSession(vaulttest.From(fmt.Sprint("203.0.113.", a+1)), pub)
						if err == nil {
							continue
						}
						if tc.ceiling == 0 {
							t.Fatalf("flood session %d from address %c: %v", i, 'A'+a, err)
						}
						vaulttest.WantKind(t, "a flood session past the ceiling", err, tokenvault.RateLimited)
						var te *tokenvault.Error
						if vaulttest.AsError(err, &te); te.RetryAfter <= 0 || te.RetryAfter > tokenvault.SessionLifetime {
							t.Fatalf("RetryAfter = %v, want until the oldest waiting session expires", te.RetryAfter)
						}
						refused++
					}
				}
				if (refused > 0) != (tc.ceiling > 0) {
					t.Errorf("%d flood sessions refused with ceiling %d", refused, tc.ceiling)
				}
				perApp, perAddress := vaulttest.PendingEntries(t, s)
				want := 3 + 26*5
				if tc.ceiling > 0 {
					want = tc.ceiling
				}
				if perApp != want || perAddress != perApp {
					t.Errorf("%d sessions waiting (%d by address), want %d", perApp, perAddress, want)
				}
				_, err := e.V.CreateSession(vaulttest.From(victim), pub)
				if tc.ceiling == 0 && err != nil {
					t.Errorf("the victim creating a session after the flood: %v", err)
				}
				if tc.ceiling > 0 {
					vaulttest.WantKind(t, "the victim creating at the ceiling", err, tokenvault.RateLimited)
				}
				for i, s := range pending {
					if err := authorize(s); err != nil {
						t.Errorf("authorizing the victim's session %d after the flood: %v", i, err)
					}
				}
				if tc.ceiling > 0 {
					// Three authorized: three creations fit again.
					if _, err := e.V.CreateSession(vaulttest.From(victim), pub); err != nil {
						t.Errorf("the victim creating once its sessions were authorized: %v", err)
					}
				}
			})
		}
	}
}
