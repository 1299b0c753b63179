package tokenvault_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store"
)

// pendingEntries counts the index entries of sessions waiting for
// authorization in s: per application, and per application and address.
func pendingEntries(t *testing.T, s store.Store) (perApp, perAddress int) {
	t.Helper()
	for k := range dump(t, s) {
		switch {
		case strings.Contains(k, "/idx/pending-session/"):
			perApp++
		case strings.Contains(k, "/idx/pending-session-addr/"):
			perAddress++
		}
	}
	return perApp, perAddress
}

// TestSessionFloodLocksNobodyOut: 1,100 concurrent session creations with
// one public key from one address do not stop a creation from another
// address, nor an in-process one, during the flood or after it; a
// legitimate session created during the flood can still be authorized
// after it; and the sessions waiting for authorization stay within the
// caps. With the default session rate (the flood is mostly refused) and
// with none (the per-address cap evicts the flood's own oldest).
func TestSessionFloodLocksNobodyOut(t *testing.T) {
	for _, sk := range storeKinds {
		for _, tc := range []struct {
			name string
			rate float64
		}{{"default rate", 0}, {"no rate", -1}} {
			t.Run("store="+sk.name+"/"+tc.name, func(t *testing.T) {
				testSessionFlood(t, sk, tc.rate)
			})
		}
	}
}

func testSessionFlood(t *testing.T, sk storeKind, rate float64) {
	s := sk.open(t)
	e := newEnvOn(t, s, func(o *tokenvault.Options) { o.Limits.SessionsPerApplication = rate })
	pub := e.app(t, tokenvault.Public, "token:create").Key
	authz := e.app(t, tokenvault.Private, "token:read")
	const flood = 1100
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 32 {
		wg.Go(func() {
			<-start
			for range flood / 32 {
				e.v.CreateSession(from("203.0.113.66"), pub)
			}
		})
	}
	for range flood % 32 {
		e.v.CreateSession(from("203.0.113.66"), pub)
	}
	close(start)
	var during []*tokenvault.Session
	for i := range 3 {
		legit, err := e.v.CreateSession(from(fmt.Sprint("198.51.100.", i+1)), pub)
		if err != nil {
			t.Fatalf("a creation from another address during the flood: %v", err)
		}
		inProcess, err := e.v.CreateSession(ctx, pub)
		if err != nil {
			t.Fatalf("an in-process creation during the flood: %v", err)
		}
		during = append(during, legit, inProcess)
	}
	wg.Wait()
	if _, err := e.v.CreateSession(from("198.51.100.9"), pub); err != nil {
		t.Errorf("a creation from another address after the flood: %v", err)
	}
	if _, err := e.v.CreateSession(ctx, pub); err != nil {
		t.Errorf("an in-process creation after the flood: %v", err)
	}
	for i, s := range during {
		err := e.v.AuthorizeSession(ctx, authz.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
		if err != nil {
			t.Errorf("authorizing legitimate session %d after the flood: %v", i, err)
		}
	}
	perApp, perAddress := pendingEntries(t, s)
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

// TestSessionFloodFromManyAddresses: when many addresses flood at once,
// the application's cap evicts its oldest waiting sessions: storage stays
// within the cap, every creation succeeds, and the newest sessions are
// the ones that can still be authorized.
func TestSessionFloodFromManyAddresses(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run("store="+sk.name, func(t *testing.T) {
			s := sk.open(t)
			e := newEnvOn(t, s, func(o *tokenvault.Options) {
				o.Limits.SessionsPerApplication, o.Limits.MaxPendingSessionsPerApplication, o.Limits.MaxPendingSessionsPerAddress = -1, 30, 5
			})
			pub := e.app(t, tokenvault.Public, "token:create").Key
			authz := e.app(t, tokenvault.Private, "token:read")
			var sessions []*tokenvault.Session
			for i := range 200 {
				s, err := e.v.CreateSession(from(fmt.Sprint("192.0.2.", i%40)), pub)
				if err != nil {
					t.Fatalf("creation %d: %v", i, err)
				}
				sessions = append(sessions, s)
			}
			if perApp, perAddress := pendingEntries(t, s); perApp != 30 || perAddress != 30 {
				t.Errorf("%d sessions waiting (%d by address), want the cap of 30", perApp, perAddress)
			}
			authorize := func(s *tokenvault.Session) error {
				return e.v.AuthorizeSession(ctx, authz.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
			}
			wantKind(t, "authorizing an evicted session", authorize(sessions[0]), tokenvault.Invalid)
			if err := authorize(sessions[len(sessions)-1]); err != nil {
				t.Errorf("authorizing the newest session: %v", err)
			}
		})
	}
}
