package vaulttest_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// Kept counts are delta rows summed on read (internal/barrier's "Kept
// counts"): these tests hold them exact against full walks, with two
// Vaults writing one tenant at once, across folds, restarts and failed
// commits, on every store.

// countPair is two Vaults on one store: for memory and bbolt one Store
// value, for PostgreSQL two Stores on one schema (two processes).
type countPair struct {
	name       string
	a, b       *tokenvault.Vault
	sa, sb     store.Store
	clock      *testfake.Clock
	key        []byte
	boot       *tokenvault.TenantBootstrap
	pathOfBolt string
}

// countStores opens, for each store kind, the stores of a pair: shared
// returns the store of the second Vault.
var countStores = []struct {
	name string
	open func(t *testing.T) (a, b store.Store, path string)
}{
	{"memory", func(t *testing.T) (store.Store, store.Store, string) {
		s := memory.New()
		return s, s, ""
	}},
	{"bolt", func(t *testing.T) (store.Store, store.Store, string) {
		path := filepath.Join(t.TempDir(), "vault.db")
		s, err := bolt.Open(path, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		return s, s, path
	}},
	{"postgres", func(t *testing.T) (store.Store, store.Store, string) {
		schema := vaulttest.FreshPGSchema(t)
		var ss [2]store.Store
		for i := range ss {
			s, err := postgres.Open(context.Background(), vaulttest.PGDSN, &postgres.Options{Schema: schema})
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			if err := s.Migrate(context.Background()); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			ss[i] = s
		}
		return ss[0], ss[1], ""
	}},
}

// openCountVault opens a Vault on s with the pair's key and clock.
func openCountVault(t *testing.T, s store.Store, key []byte, clock *testfake.Clock) *tokenvault.Vault {
	t.Helper()
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{
		Store: s, Now: clock.Now,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return v
}

// forEachCountPair runs fn with a fresh pair on each store kind.
// wrap, when not nil, wraps the stores each Vault sees (index 0: A).
func forEachCountPair(t *testing.T, wrap func(i int, s store.Store) store.Store, fn func(t *testing.T, p *countPair)) {
	for _, sk := range countStores {
		t.Run("store="+sk.name, func(t *testing.T) {
			sa, sb, path := sk.open(t)
			p := &countPair{name: sk.name, sa: sa, sb: sb, clock: vaulttest.NewClock(), key: vaulttest.NewMasterKey(), pathOfBolt: path}
			if wrap != nil {
				p.sa, p.sb = wrap(0, sa), wrap(1, sb)
			}
			p.a = openCountVault(t, p.sa, p.key, p.clock)
			p.b = openCountVault(t, p.sb, p.key, p.clock)
			t.Cleanup(func() {
				p.a.Close()
				p.b.Close()
				sa.Close()
				if sb != sa {
					sb.Close()
				}
			})
			boot, err := p.a.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme", Owner: tokenvault.User{Email: "o@example.com"}})
			if err != nil {
				t.Fatal(err)
			}
			p.boot = boot
			fn(t, p)
		})
	}
}

// tokenApp creates, on v, an application that may create, read and
// delete tokens everywhere.
func tokenApp(t *testing.T, v *tokenvault.Vault, mgmt tokenvault.Credential) *tokenvault.Application {
	t.Helper()
	app, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name: "tokens", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read", "token:delete"}}},
	})
	if err != nil {
		t.Fatalf("CreateApplication: %v", err)
	}
	return app
}

// walkTokens lists every token req selects, page by page, and returns
// how many there are and the total_items of the first page.
func walkTokens(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, req tokenvault.ListTokensRequest) (walked, total int) {
	t.Helper()
	req.Size = 100
	first := true
	for {
		p, err := v.ListTokens(ctx, key, req)
		if err != nil {
			t.Fatalf("ListTokens(%+v): %v", req, err)
		}
		if first {
			total, first = p.Pagination.TotalItems, false
		}
		walked += len(p.Data)
		if p.Pagination.After == "" {
			return walked, total
		}
		req.Start = p.Pagination.After
	}
}

// walkApplications is walkTokens for applications.
func walkApplications(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential) (walked, total int) {
	t.Helper()
	req := tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 100}}
	first := true
	for {
		p, err := v.ListApplications(ctx, key, req)
		if err != nil {
			t.Fatalf("ListApplications: %v", err)
		}
		if first {
			total, first = p.Pagination.TotalItems, false
		}
		walked += len(p.Data)
		if p.Pagination.After == "" {
			return walked, total
		}
		req.Start = p.Pagination.After
	}
}

// walkTenants is walkTokens for tenants.
func walkTenants(t *testing.T, v *tokenvault.Vault) (walked, total int) {
	t.Helper()
	req := tokenvault.PageRequest{Size: 100}
	first := true
	for {
		p, err := v.ListTenants(ctx, req)
		if err != nil {
			t.Fatalf("ListTenants: %v", err)
		}
		if first {
			total, first = p.Pagination.TotalItems, false
		}
		walked += len(p.Data)
		if p.Pagination.After == "" {
			return walked, total
		}
		req.Start = p.Pagination.After
	}
}

// checkCounts compares, on v, every count the test changed with a full
// walk, and with want (tokens in all, in /a/, of type card; applications;
// tenants).
func checkCounts(t *testing.T, when string, v *tokenvault.Vault, p *countPair, key tokenvault.Credential, want [5]int) {
	t.Helper()
	reqs := []tokenvault.ListTokensRequest{{}, {Container: "/a/"}, {Type: "token"}}
	for i, req := range reqs {
		walked, total := walkTokens(t, v, key, req)
		if walked != want[i] || total != want[i] {
			t.Errorf("%s: ListTokens(%+v) walks %d tokens, total_items %d; want %d", when, req, walked, total, want[i])
		}
	}
	if walked, total := walkApplications(t, v, p.boot.Application.Key); walked != want[3] || total != want[3] {
		t.Errorf("%s: ListApplications walks %d, total_items %d; want %d", when, walked, total, want[3])
	}
	if walked, total := walkTenants(t, v); walked != want[4] || total != want[4] {
		t.Errorf("%s: ListTenants walks %d, total_items %d; want %d", when, walked, total, want[4])
	}
}

// deltaRows counts the delta rows of counts in s (keys with "/+/" under
// a count family).
func deltaRows(t *testing.T, s store.Store) int {
	t.Helper()
	n := 0
	err := s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			if strings.Contains(string(k), "/count/") && strings.Contains(string(k), "/+/") {
				n++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCountsExactWithTwoVaults: two Vaults on one store create and
// delete tokens, applications and tenants at once; every kept count
// (ListTokens' total_items for all tokens, a container and a type,
// ListApplications', ListTenants') then equals a full walk, read from
// either Vault, before and after the delta rows are folded.
func TestCountsExactWithTwoVaults(t *testing.T) {
	forEachCountPair(t, nil, func(t *testing.T, p *countPair) {
		mgmt := p.boot.Application.Key
		app := tokenApp(t, p.a, mgmt)
		const workers, perWorker = 4, 15
		var mu sync.Mutex
		var tokens, inA, typed, apps, tenants int
		apps, tenants = 2, 1 // the bootstrap application and tokenApp; Acme
		var wg sync.WaitGroup
		for w := range 2 * workers {
			v := p.a
			if w%2 == 1 {
				v = p.b
			}
			wg.Go(func() {
				for i := range perWorker {
					typ, containers := "token", []string{"/a/x/"}
					if i%2 == 1 {
						typ, containers = "card", []string{"/b/"}
					}
					data := any(fmt.Sprintf("w%d-%d", w, i))
					if typ == "card" {
						data = map[string]any{"number": "4111111111111111", "expiration_month": 12, "expiration_year": 2030}
					}
					tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: typ, Data: data, Containers: containers})
					if err != nil {
						t.Errorf("CreateToken: %v", err)
						return
					}
					kept := i%3 != 2
					if !kept {
						if err := v.DeleteToken(ctx, app.Key, tok.ID); err != nil {
							t.Errorf("DeleteToken: %v", err)
							return
						}
					}
					if i%5 == 0 {
						a, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "more", Type: tokenvault.Private, Permissions: []string{"token:read"}})
						if err != nil {
							t.Errorf("CreateApplication: %v", err)
							return
						}
						if i%10 == 0 {
							if err := v.DeleteApplication(ctx, mgmt, a.ID); err != nil {
								t.Errorf("DeleteApplication: %v", err)
								return
							}
						} else {
							mu.Lock()
							apps++
							mu.Unlock()
						}
					}
					if i == 7 {
						if _, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "More", Owner: tokenvault.User{Email: "o@example.com"}}); err != nil {
							t.Errorf("CreateTenant: %v", err)
							return
						}
						mu.Lock()
						tenants++
						mu.Unlock()
					}
					if kept {
						mu.Lock()
						tokens++
						if typ == "token" {
							inA++
							typed++
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		want := [5]int{tokens, inA, typed, apps, tenants}
		checkCounts(t, "before folding, read by A", p.a, p, app.Key, want)
		checkCounts(t, "before folding, read by B", p.b, p, app.Key, want)
		before := deltaRows(t, p.sa)
		for _, v := range []*tokenvault.Vault{p.a, p.b} {
			if _, err := vaulttest.FoldCounts(ctx, v); err != nil {
				t.Fatalf("FoldCounts: %v", err)
			}
		}
		after := deltaRows(t, p.sa)
		t.Logf("%d delta rows before folding, %d after", before, after)
		checkCounts(t, "after folding, read by A", p.a, p, app.Key, want)
		checkCounts(t, "after folding, read by B", p.b, p, app.Key, want)
		// On a store one process holds, folding leaves no delta row; on
		// a shared one, each live instance keeps one row of its own per
		// count at most.
		if p.name != "postgres" && after != 0 {
			t.Errorf("%d delta rows left after folding, want 0", after)
		}
		if p.name == "postgres" && after > before {
			t.Errorf("%d delta rows after folding, %d before", after, before)
		}
	})
}
