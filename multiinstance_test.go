package tokenvault_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// These tests run two Vaults on one PostgreSQL schema, as two server
// processes behind a load balancer would: each has its own Store (its own
// connection pool) and its own caches, and they share only the database,
// the master key and (here) the clock.

// pgPair is two Vault instances on one fresh PostgreSQL schema.
type pgPair struct {
	a, b  *tokenvault.Vault
	clock *testfake.Clock
}

// newPGPair opens the two instances, at the same time as two servers
// starting together would, or skips the test without a server.
func newPGPair(t *testing.T) *pgPair {
	t.Helper()
	return newPGPairWith(t, nil)
}

// newPGPairWith is newPGPair with instance B's store passed through wrapB
// (when not nil).
func newPGPairWith(t *testing.T, wrapB func(store.Store) store.Store) *pgPair {
	t.Helper()
	schema := freshPGSchema(t)
	dsn := pgDSN

	p := &pgPair{clock: newClock()}
	key := newMasterKey()
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
				Now:       p.clock.Now,
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
	p.a, p.b = vaults[0], vaults[1]
	return p
}

// tenant creates a tenant on instance A.
func (p *pgPair) tenant(t *testing.T) *tokenvault.TenantBootstrap {
	t.Helper()
	boot, err := p.a.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
		Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatalf("CreateTenant on A: %v", err)
	}
	return boot
}

// pgCreator creates, on v, a private application that may create tokens and
// read them revealed.
func pgCreator(t *testing.T, v *tokenvault.Vault, mgmt tokenvault.Credential) *tokenvault.Application {
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

func TestMultiInstanceKeys(t *testing.T) {
	p := newPGPair(t)
	ctx := context.Background()
	boot := p.tenant(t)
	mgmt := boot.Application.Key

	// The management key created on A works on B at once.
	tenant, err := p.b.GetTenant(ctx, mgmt)
	if err != nil {
		t.Fatalf("GetTenant on B with A's new management key: %v", err)
	}
	if tenant.ID != boot.Tenant.ID {
		t.Errorf("GetTenant on B = tenant %s, want %s", tenant.ID, boot.Tenant.ID)
	}

	// An application created on B, used on both.
	app := pgCreator(t, p.b, mgmt)
	tok, err := p.a.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatalf("CreateToken on A with an application created on B: %v", err)
	}
	if _, err := p.b.GetToken(ctx, app.Key, tok.ID); err != nil {
		t.Fatalf("GetToken on B: %v", err)
	}

	// Its key regenerated on A is refused on B from then on, and the new
	// one works there.
	regen, err := p.a.RegenerateApplicationKey(ctx, mgmt, app.ID)
	if err != nil {
		t.Fatalf("RegenerateApplicationKey on A: %v", err)
	}
	_, err = p.b.GetToken(ctx, app.Key, tok.ID)
	wantKind(t, "GetToken on B with the old key", err, tokenvault.Unauthenticated)
	_, err = p.b.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "y"})
	wantKind(t, "CreateToken on B with the old key", err, tokenvault.Unauthenticated)
	if _, err := p.b.GetToken(ctx, regen.Key, tok.ID); err != nil {
		t.Errorf("GetToken on B with the new key: %v", err)
	}

	// Deleted on B: refused on A.
	if err := p.b.DeleteApplication(ctx, mgmt, app.ID); err != nil {
		t.Fatalf("DeleteApplication on B: %v", err)
	}
	_, err = p.a.GetToken(ctx, regen.Key, tok.ID)
	wantKind(t, "GetToken on A with a key deleted on B", err, tokenvault.Unauthenticated)
}

func TestMultiInstanceTokens(t *testing.T) {
	p := newPGPair(t)
	ctx := context.Background()
	boot := p.tenant(t)
	app := pgCreator(t, p.a, boot.Application.Key)

	out, err := p.a.Tokenize(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret value"})
	if err != nil {
		t.Fatalf("Tokenize on A: %v", err)
	}
	created, ok := out.(*tokenvault.Token)
	if !ok {
		t.Fatalf("Tokenize(TokenRequest) = %T, want *tokenvault.Token", out)
	}
	got, err := p.b.GetToken(ctx, app.Key, created.ID)
	if err != nil {
		t.Fatalf("GetToken on B of a token created on A: %v", err)
	}
	if got.ID != created.ID || got.Data != "secret value" {
		t.Errorf("GetToken on B = id %s, data %v; want %s, %q", got.ID, got.Data, created.ID, "secret value")
	}

	// A plain-value body: the id returned by A resolves on B.
	out, err = p.a.Tokenize(ctx, app.Key, map[string]any{"ssn": "123-45-6789"})
	if err != nil {
		t.Fatalf("Tokenize(object) on A: %v", err)
	}
	id, _ := out.(map[string]any)["ssn"].(string)
	if got, err := p.b.GetToken(ctx, app.Key, id); err != nil || got.Data != "123-45-6789" {
		t.Errorf("GetToken(%q) on B = %v, %v; want data %q", id, got, err, "123-45-6789")
	}
}

// TestMultiInstanceDeduplication tokenizes one value with deduplication from
// goroutines split across both instances: exactly one token may result.
// This holds only because the store runs Updates serializably: the
// fingerprint lookup and the insert of each request cannot interleave with
// another's, whichever instance it runs on.
func TestMultiInstanceDeduplication(t *testing.T) {
	p := newPGPair(t)
	ctx := context.Background()
	boot := p.tenant(t)
	app := pgCreator(t, p.a, boot.Application.Key)

	ids := make([]string, 16)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range ids {
		v := p.a
		if i%2 == 1 {
			v = p.b
		}
		wg.Go(func() {
			<-start
			out, err := v.Tokenize(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "same value", DeduplicateToken: true})
			if err != nil {
				t.Errorf("Tokenize %d: %v", i, err)
				return
			}
			ids[i] = out.(*tokenvault.Token).ID
		})
	}
	close(start)
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent deduplicated tokenizations on two instances returned several ids: %v", ids)
		}
	}
	for _, v := range []*tokenvault.Vault{p.a, p.b} {
		page, err := v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Pagination.TotalItems != 1 {
			t.Errorf("%d tokens exist, want 1", page.Pagination.TotalItems)
		}
	}
}

// TestMultiInstanceSweep runs the sweeper of both instances at once over
// one expired application: it is swept, and logged, exactly once.
func TestMultiInstanceSweep(t *testing.T) {
	p := newPGPair(t)
	ctx := context.Background()
	boot := p.tenant(t)
	mgmt := boot.Application.Key
	at := p.clock.Now().Add(time.Hour)
	app, err := p.a.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name: "temp", Type: tokenvault.Private, Permissions: []string{"token:read"}, ExpiresAt: &at,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)

	var counts [2]int
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, v := range []*tokenvault.Vault{p.a, p.b} {
		wg.Go(func() {
			<-start
			n, err := v.Sweep(ctx)
			if err != nil {
				t.Errorf("Sweep on instance %d: %v", i, err)
			}
			counts[i] = n
		})
	}
	close(start)
	wg.Wait()
	if counts[0]+counts[1] != 1 {
		t.Errorf("concurrent Sweeps removed %d + %d, want 1 in all", counts[0], counts[1])
	}

	logs, err := p.b.ListLogs(ctx, mgmt, tokenvault.ListLogsRequest{EntityType: "application", EntityID: app.ID})
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, l := range logs.Data {
		if l.Message == "Application expired" {
			expired++
		}
	}
	if expired != 1 {
		t.Errorf("%d %q log lines, want 1: %+v", expired, "Application expired", logs.Data)
	}
	_, err = p.a.GetApplication(ctx, mgmt, app.ID)
	wantKind(t, "GetApplication of the swept application", err, tokenvault.NotFound)
	for i, v := range []*tokenvault.Vault{p.a, p.b} {
		if n, err := v.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("second Sweep on instance %d = %d, %v; want 0", i, n, err)
		}
	}
}
