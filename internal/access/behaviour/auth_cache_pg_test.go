package access_test

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
)

// The authentication cache on PostgreSQL: on, and invalidated on every
// instance by the store's generation before the call that changed a key
// returns.

// lookupCounter counts the API key lookups read through a store: none
// means the key was authenticated from the cache. Its transactions keep the
// store's generation.
type lookupCounter struct {
	store.Store
	n *atomic.Int64
}

type genTx interface {
	store.Tx
	store.Generation
}

type lookupCountingTx struct {
	genTx
	n *atomic.Int64
}

func (t lookupCountingTx) Get(key []byte) ([]byte, error) {
	if bytes.HasPrefix(key, []byte("sys/apikey/")) {
		t.n.Add(1)
	}
	return t.genTx.Get(key)
}

func (s lookupCounter) wrap(fn func(store.Tx) error) func(store.Tx) error {
	return func(tx store.Tx) error { return fn(lookupCountingTx{tx.(genTx), s.n}) }
}

func (s lookupCounter) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, s.wrap(fn))
}

func (s lookupCounter) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, s.wrap(fn))
}

func TestMultiInstanceAuthCache(t *testing.T) {
	var lookups atomic.Int64
	p := vaulttest.NewPGPairWith(t, func(s store.Store) store.Store { return lookupCounter{s, &lookups} })
	ctx := context.Background()
	boot := p.Tenant(t)
	mgmt := boot.Application.Key
	app := vaulttest.PGCreator(t, p.A, mgmt)

	// wantCached checks that call, on B, authenticates from the cache.
	wantCached := func(what string, call func() error) {
		t.Helper()
		before := lookups.Load()
		if err := call(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := lookups.Load() - before; n != 0 {
			t.Errorf("%s read %d API key lookups, want 0 (from the cache)", what, n)
		}
	}
	createOnB := func(key tokenvault.Credential) func() error {
		return func() error {
			_, err := p.B.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "x"})
			return err
		}
	}

	// The first call on B reads the key; the next ones do not, even while
	// A writes tokens (which do not touch keys).
	if err := createOnB(app.Key)(); err != nil {
		t.Fatalf("CreateToken on B: %v", err)
	}
	wantCached("CreateToken on B, again", createOnB(app.Key))
	tok, err := p.A.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "y"})
	if err != nil {
		t.Fatalf("CreateToken on A: %v", err)
	}
	wantCached("GetToken on B after A wrote a token", func() error {
		_, err := p.B.GetToken(ctx, app.Key, tok.ID) // a read transaction
		return err
	})

	// A permission taken away on A is refused on B at once.
	_, err = p.A.UpdateApplication(ctx, mgmt, app.ID, tokenvault.UpdateApplicationRequest{
		Name:  "creator",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:read"}}},
	})
	if err != nil {
		t.Fatalf("UpdateApplication on A: %v", err)
	}
	vaulttest.WantKind(t, "CreateToken on B without token:create", createOnB(app.Key)(), tokenvault.PermissionDenied)
	if _, err := p.B.GetToken(ctx, app.Key, tok.ID); err != nil {
		t.Fatalf("GetToken on B with token:read left: %v", err)
	}
	// And given back.
	_, err = p.A.UpdateApplication(ctx, mgmt, app.ID, tokenvault.UpdateApplicationRequest{
		Name:  "creator",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}},
	})
	if err != nil {
		t.Fatalf("UpdateApplication on A: %v", err)
	}
	if err := createOnB(app.Key)(); err != nil {
		t.Fatalf("CreateToken on B with token:create given back: %v", err)
	}
	wantCached("CreateToken on B, again", createOnB(app.Key))

	// Regenerated on A: the old key is refused on B at once, by writes and
	// by reads; the new one works and is cached.
	regen, err := p.A.RegenerateApplicationKey(ctx, mgmt, app.ID)
	if err != nil {
		t.Fatalf("RegenerateApplicationKey on A: %v", err)
	}
	vaulttest.WantKind(t, "CreateToken on B with the old key", createOnB(app.Key)(), tokenvault.Unauthenticated)
	_, err = p.B.GetToken(ctx, app.Key, tok.ID)
	vaulttest.WantKind(t, "GetToken on B with the old key", err, tokenvault.Unauthenticated)
	if err := createOnB(regen.Key)(); err != nil {
		t.Fatalf("CreateToken on B with the new key: %v", err)
	}
	wantCached("CreateToken on B with the new key, again", createOnB(regen.Key))

	// Deleted on A: refused on B at once.
	if err := p.A.DeleteApplication(ctx, mgmt, app.ID); err != nil {
		t.Fatalf("DeleteApplication on A: %v", err)
	}
	vaulttest.WantKind(t, "CreateToken on B with a deleted application's key", createOnB(regen.Key)(), tokenvault.Unauthenticated)
	_, err = p.B.GetToken(ctx, regen.Key, tok.ID)
	vaulttest.WantKind(t, "GetToken on B with a deleted application's key", err, tokenvault.Unauthenticated)
}

// TestMultiInstanceRevokeUnderLoad regenerates a key on A while many
// goroutines use it on B (their calls share transactions there): every call
// on B that begins after the regeneration returned is refused. Run it under
// -race.
func TestMultiInstanceRevokeUnderLoad(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	app := vaulttest.PGCreator(t, p.A, boot.Application.Key)
	tok, err := p.B.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatalf("CreateToken on B: %v", err)
	}

	var regenerated atomic.Bool
	var okBefore atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 16 {
		wg.Go(func() {
			for after := 0; after < 20; {
				select {
				case <-stop:
					return
				default:
				}
				revoked := regenerated.Load()
				var err error
				if g%2 == 0 {
					_, err = p.B.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: g})
				} else {
					_, err = p.B.GetToken(ctx, app.Key, tok.ID)
				}
				switch {
				case revoked:
					after++
					if tokenvault.ErrorKind(err) != tokenvault.Unauthenticated {
						t.Errorf("goroutine %d: a call on B begun after the regeneration on A returned = %v, want Unauthenticated", g, err)
						return
					}
				case err == nil:
					okBefore.Add(1)
				case tokenvault.ErrorKind(err) != tokenvault.Unauthenticated:
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		})
	}
	// Let B's goroutines warm its cache and run for a while.
	for okBefore.Load() < 100 && !t.Failed() {
		if _, err := p.A.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "a"}); err != nil {
			t.Fatalf("CreateToken on A: %v", err)
		}
	}
	if _, err := p.A.RegenerateApplicationKey(ctx, boot.Application.Key, app.ID); err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("RegenerateApplicationKey on A: %v", err)
	}
	regenerated.Store(true)
	wg.Wait()
}

// TestMultiInstanceSessionAuthCache uses a session on B, cached there, while
// A authorizes it and then takes its authorizer's permission away: B
// follows each change as soon as the call on A returns.
func TestMultiInstanceSessionAuthCache(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	mgmt := boot.Application.Key
	pub, err := p.B.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name: "pub", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenCreate},
	})
	if err != nil {
		t.Fatalf("CreateApplication on B: %v", err)
	}
	authorizer := vaulttest.PGCreator(t, p.A, mgmt) // token:create and token:read, revealed
	s, err := p.B.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatalf("CreateSession on B: %v", err)
	}
	tok, err := p.A.CreateToken(ctx, authorizer.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatalf("CreateToken on A: %v", err)
	}
	read := func() error {
		_, err := p.B.GetToken(ctx, s.SessionKey, tok.ID)
		return err
	}

	// Not authorized yet: nothing to read.
	if err := read(); err == nil {
		t.Fatalf("GetToken on B with a pending session = nil error, want one")
	}
	if err := p.A.AuthorizeSession(ctx, authorizer.Key, tokenvault.AuthorizeSessionRequest{
		Nonce: s.Nonce, Permissions: []string{"token:read"},
	}); err != nil {
		t.Fatalf("AuthorizeSession on A: %v", err)
	}
	for i := range 2 { // the second from the cache
		if err := read(); err != nil {
			t.Fatalf("GetToken %d on B with the session authorized on A: %v", i, err)
		}
	}

	// The authorizer loses token:read on A: the session is capped by it at
	// once on B.
	_, err = p.A.UpdateApplication(ctx, mgmt, authorizer.ID, tokenvault.UpdateApplicationRequest{
		Name:  "creator",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create"}}},
	})
	if err != nil {
		t.Fatalf("UpdateApplication on A: %v", err)
	}
	vaulttest.WantKind(t, "GetToken on B with a session whose authorizer lost token:read", read(), tokenvault.PermissionDenied)
}
