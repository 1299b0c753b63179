package vaulttest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// These tests run two Vaults on one PostgreSQL schema, as two server
// processes behind a load balancer would: each has its own Store (its own
// connection pool) and its own caches, and they share only the database,
// the master key and (here) the clock.

func TestMultiInstanceKeys(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	mgmt := boot.Application.Key

	// The management key created on A works on B at once.
	tenant, err := p.B.GetTenant(ctx, mgmt)
	if err != nil {
		t.Fatalf("GetTenant on B with A's new management key: %v", err)
	}
	if tenant.ID != boot.Tenant.ID {
		t.Errorf("GetTenant on B = tenant %s, want %s", tenant.ID, boot.Tenant.ID)
	}

	// An application created on B, used on both.
	app := vaulttest.PGCreator(t, p.B, mgmt)
	tok, err := p.A.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatalf("CreateToken on A with an application created on B: %v", err)
	}
	if _, err := p.B.GetToken(ctx, app.Key, tok.ID); err != nil {
		t.Fatalf("GetToken on B: %v", err)
	}

	// Its key regenerated on A is refused on B from then on, and the new
	// one works there.
	regen, err := p.A.RegenerateApplicationKey(ctx, mgmt, app.ID)
	if err != nil {
		t.Fatalf("RegenerateApplicationKey on A: %v", err)
	}
	_, err = p.B.GetToken(ctx, app.Key, tok.ID)
	vaulttest.WantKind(t, "GetToken on B with the old key", err, tokenvault.Unauthenticated)
	_, err = p.B.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "y"})
	vaulttest.WantKind(t, "CreateToken on B with the old key", err, tokenvault.Unauthenticated)
	if _, err := p.B.GetToken(ctx, regen.Key, tok.ID); err != nil {
		t.Errorf("GetToken on B with the new key: %v", err)
	}

	// Deleted on B: refused on A.
	if err := p.B.DeleteApplication(ctx, mgmt, app.ID); err != nil {
		t.Fatalf("DeleteApplication on B: %v", err)
	}
	_, err = p.A.GetToken(ctx, regen.Key, tok.ID)
	vaulttest.WantKind(t, "GetToken on A with a key deleted on B", err, tokenvault.Unauthenticated)
}

func TestMultiInstanceTokens(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	app := vaulttest.PGCreator(t, p.A, boot.Application.Key)

	out, err := p.A.Tokenize(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret value"})
	if err != nil {
		t.Fatalf("Tokenize on A: %v", err)
	}
	created, ok := out.(*tokenvault.Token)
	if !ok {
		t.Fatalf("Tokenize(TokenRequest) = %T, want *tokenvault.Token", out)
	}
	got, err := p.B.GetToken(ctx, app.Key, created.ID)
	if err != nil {
		t.Fatalf("GetToken on B of a token created on A: %v", err)
	}
	if got.ID != created.ID || got.Data != "secret value" {
		t.Errorf("GetToken on B = id %s, data %v; want %s, %q", got.ID, got.Data, created.ID, "secret value")
	}

	// A plain-value body: the id returned by A resolves on B.
	out, err = p.A.Tokenize(ctx, app.Key, map[string]any{"ssn": "123-45-6789"})
	if err != nil {
		t.Fatalf("Tokenize(object) on A: %v", err)
	}
	id, _ := out.(map[string]any)["ssn"].(string)
	if got, err := p.B.GetToken(ctx, app.Key, id); err != nil || got.Data != "123-45-6789" {
		t.Errorf("GetToken(%q) on B = %v, %v; want data %q", id, got, err, "123-45-6789")
	}
}

// TestMultiInstanceDeduplication tokenizes one value with deduplication from
// goroutines split across both instances: exactly one token may result.
// This holds only because the store runs Updates serializably: the
// fingerprint lookup and the insert of each request cannot interleave with
// another's, whichever instance it runs on.
func TestMultiInstanceDeduplication(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	app := vaulttest.PGCreator(t, p.A, boot.Application.Key)

	ids := make([]string, 16)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range ids {
		v := p.A
		if i%2 == 1 {
			v = p.B
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
	for _, v := range []*tokenvault.Vault{p.A, p.B} {
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
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	mgmt := boot.Application.Key
	at := p.Clock.Now().Add(time.Hour)
	app, err := p.A.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name: "temp", Type: tokenvault.Private, Permissions: []string{"token:read"}, ExpiresAt: &at,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Clock.Advance(time.Hour)

	var counts [2]int
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, v := range []*tokenvault.Vault{p.A, p.B} {
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

	logs, err := p.B.ListLogs(ctx, mgmt, tokenvault.ListLogsRequest{EntityType: "application", EntityID: app.ID})
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
	_, err = p.A.GetApplication(ctx, mgmt, app.ID)
	vaulttest.WantKind(t, "GetApplication of the swept application", err, tokenvault.NotFound)
	for i, v := range []*tokenvault.Vault{p.A, p.B} {
		if n, err := v.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("second Sweep on instance %d = %d, %v; want 0", i, n, err)
		}
	}
}
