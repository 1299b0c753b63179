package vaulttest

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// PGPair is two Vault instances on one fresh PostgreSQL schema.
type PGPair struct {
	A, B  *tokenvault.Vault
	Clock *testfake.Clock
}

// NewPGPair opens the two instances, at the same time as two servers
// starting together would, or skips the test without a server.
func NewPGPair(t *testing.T) *PGPair {
	t.Helper()
	return NewPGPairWith(t, nil)
}

// NewPGPairWith is NewPGPair with instance B's store passed through wrapB
// (when not nil).
func NewPGPairWith(t *testing.T, wrapB func(store.Store) store.Store) *PGPair {
	t.Helper()
	schema := FreshPGSchema(t)
	dsn := PGDSN

	p := &PGPair{Clock: NewClock()}
	key := NewMasterKey()
	vaults := make([]*tokenvault.Vault, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range vaults {
		wg.Go(func() {
			ctx := context.Background()
			s, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
			if err != nil {
				errs[i] = err
				return
			}
			t.Cleanup(func() { s.Close() })
			// Each server migrates at start; they may race.
			if err := s.Migrate(ctx); err != nil {
				errs[i] = err
				return
			}
			var st store.Store = s
			if i == 1 && wrapB != nil {
				st = wrapB(s)
			}
			v, err := tokenvault.Open(ctx, tokenvault.Options{
				Store:     st,
				Now:       p.Clock.Now,
				Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
				Keys:      tokenvault.KeyOptions{MasterKey: key},
				Retention: tokenvault.RetentionOptions{SweepInterval: -1},
			})
			if err != nil {
				errs[i] = err
				return
			}
			t.Cleanup(func() { v.Close() })
			vaults[i] = v
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	p.A, p.B = vaults[0], vaults[1]
	return p
}

// Tenant creates a tenant on instance A.
func (p *PGPair) Tenant(t *testing.T) *tokenvault.TenantBootstrap {
	t.Helper()
	boot, err := p.A.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
		Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatalf("CreateTenant on A: %v", err)
	}
	return boot
}

// PGCreator creates, on v, a private application that may create tokens and
// read them revealed.
func PGCreator(t *testing.T, v *tokenvault.Vault, mgmt tokenvault.Credential) *tokenvault.Application {
	t.Helper()
	app, err := v.CreateApplication(context.Background(), mgmt, tokenvault.CreateApplicationRequest{
		Name: "creator", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}},
	})
	if err != nil {
		t.Fatalf("CreateApplication: %v", err)
	}
	return app
}
