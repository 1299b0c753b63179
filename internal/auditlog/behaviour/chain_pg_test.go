package auditlog_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// runCounter counts the Updates through a store and the runs of their
// functions: runs beyond one an Update are the store's retries (a
// serialization failure on PostgreSQL, a shared transaction run again).
// Its transactions are the store's own, generation and all.
type runCounter struct {
	store.Store
	updates, runs *atomic.Int64
}

func (s runCounter) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, func(tx store.Tx) error {
		s.runs.Add(1)
		return fn(tx)
	})
}

// openChainPGVaults opens n Vaults on one fresh PostgreSQL schema, each
// store counting its runs into updates and runs.
func openChainPGVaults(t *testing.T, n int, updates, runs *atomic.Int64) []*tokenvault.Vault {
	t.Helper()
	schema := vaulttest.FreshPGSchema(t)
	key := vaulttest.NewMasterKey()
	ctx := context.Background()
	var out []*tokenvault.Vault
	for range n {
		s, err := postgres.Open(ctx, vaulttest.PGDSN, &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		v, err := tokenvault.Open(ctx, tokenvault.Options{
			Store: runCounter{s, updates, runs}, Keys: tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		out = append(out, v)
	}
	return out
}

// chainLoad has each of the vaults run goroutines goroutines, each
// creating perG tokens of app and reading each twice; it returns the
// tokens created and the calls a second.
func chainLoad(t *testing.T, vaults []*tokenvault.Vault, key tokenvault.Credential, goroutines, perG int) ([]string, float64) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	start := time.Now()
	for vi, v := range vaults {
		for g := range goroutines {
			wg.Go(func() {
				for i := range perG {
					tok, err := v.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("v%d-g%d-%d", vi, g, i)})
					if err != nil {
						t.Error(err)
						return
					}
					for range 2 {
						if _, err := v.GetToken(ctx, key, tok.ID); err != nil {
							t.Error(err)
							return
						}
					}
					mu.Lock()
					ids = append(ids, tok.ID)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return ids, float64(3*len(ids)) / time.Since(start).Seconds()
}

// checkChainOf walks tenant tid's chain through v, once the linker (of
// whichever instance holds its lease) has linked every queued line, and
// fails t on any problem, on a line not chained, or on a token of ids
// without its creation line and two read lines on the chain once each.
func checkChainOf(t *testing.T, v *tokenvault.Vault, tid string, ids []string) *vaulttest.ChainWalk {
	t.Helper()
	w, err := vaulttest.WalkChain(context.Background(), v, tid)
	for deadline := time.Now().Add(60 * time.Second); err == nil && w.Queued > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		w, err = vaulttest.WalkChain(context.Background(), v, tid)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range w.Problems {
		if i == 10 {
			t.Errorf("... and %d more problems", len(w.Problems)-10)
			break
		}
		t.Error(p)
	}
	if w.FirstSeq != 1 || w.LastSeq != uint64(w.Lines) || w.Chained != w.Lines || w.PreChain != 0 {
		t.Errorf("chain %d..%d, %d of %d lines chained (%d before the chain)", w.FirstSeq, w.LastSeq, w.Chained, w.Lines, w.PreChain)
	}
	for _, id := range ids {
		if c, r := w.ByEntity[id+" "+tokenvault.OpCreate], w.ByEntity[id+" "+tokenvault.OpRead]; c != 1 || r != 2 {
			t.Errorf("token %s: %d creation and %d read lines on the chain, want 1 and 2", id, c, r)
		}
	}
	return w
}

// TestChainTwoInstancesOnePostgres: two Vaults on one PostgreSQL schema
// write and read tokens of one tenant from many goroutines at once, and
// of a second tenant beside it; each tenant's chain then holds every line
// once, seqs 1..n with no gap or repeat, each linked to the line before,
// and the head at the last: one linker (the lease holder's) extends it,
// beside the calls' commits, which write nothing of the chain. The
// retries are logged, and so are the calls a second of one instance and
// of two.
func TestChainTwoInstancesOnePostgres(t *testing.T) {
	var updates, runs atomic.Int64
	vaults := openChainPGVaults(t, 2, &updates, &runs)
	a, b := vaults[0], vaults[1]
	ctx := context.Background()
	perG := 10
	if n, err := strconv.Atoi(os.Getenv("TOKENVAULT_CHAIN_PG_LOAD")); err == nil && n > 0 {
		perG = n // for the figures in the notes
	}
	type tenant struct {
		id  string
		key tokenvault.Credential
	}
	newTenant := func(v *tokenvault.Vault, name string) tenant {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "rw", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
		if err != nil {
			t.Fatal(err)
		}
		return tenant{boot.Tenant.ID, app.Key}
	}
	one, shared, other := newTenant(a, "One"), newTenant(a, "Shared"), newTenant(b, "Other")

	// One instance alone on a tenant, for the comparison.
	updates.Store(0)
	runs.Store(0)
	oneIDs, oneRate := chainLoad(t, []*tokenvault.Vault{a}, one.key, 8, perG)
	oneRetries := runs.Load() - updates.Load()

	// Two instances on one tenant, and on a second tenant beside it.
	updates.Store(0)
	runs.Store(0)
	var otherIDs []string
	var wg sync.WaitGroup
	wg.Go(func() { otherIDs, _ = chainLoad(t, []*tokenvault.Vault{a, b}, other.key, 2, perG) })
	sharedIDs, twoRate := chainLoad(t, []*tokenvault.Vault{a, b}, shared.key, 4, perG)
	wg.Wait()
	twoRetries := runs.Load() - updates.Load()
	t.Logf("one instance, 8 goroutines: %.0f calls/s, %d retries; two instances, 4 goroutines each (and 2 each on a second tenant): %.0f calls/s on the shared tenant, %d retries in %d updates",
		oneRate, oneRetries, twoRate, twoRetries, updates.Load())

	checkChainOf(t, b, one.id, oneIDs)
	checkChainOf(t, a, shared.id, sharedIDs)
	checkChainOf(t, a, other.id, otherIDs)
}
