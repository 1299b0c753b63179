package vaulttest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// The write path's property, for every store: two Vaults on one store
// (two instances), one tenant, tokenize calls on both at once; no key
// that a tokenize commit on one writes is written by a tokenize commit on
// the other, and one token's commit writes a bounded handful of keys, all
// its own or its instance's.

// writePathPair is two Vaults on one store, each through its own
// recording wrapper, a tenant created through A, and an application
// whose key is valid on both.
type writePathPair struct {
	a, b       *tokenvault.Vault
	recA, recB *recorder
	boot       *tokenvault.TenantBootstrap
	app        *tokenvault.Application
}

// writePathStores names the stores the write path tests run on; postgres
// is skipped without TOKENVAULT_TEST_POSTGRES_DSN.
var writePathStores = []string{"memory", "bolt", "postgres"}

// openSharedStores opens what two instances of kind use: one store for a
// store one process holds (memory, a bbolt file, which its opener
// locks), two stores on one schema for PostgreSQL (two processes).
func openSharedStores(t *testing.T, kind string) (a, b store.Store) {
	t.Helper()
	switch kind {
	case "memory":
		s := memory.New()
		t.Cleanup(func() { s.Close() })
		return s, s
	case "bolt":
		s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s, s
	case "postgres":
		schema := vaulttest.FreshPGSchema(t)
		ctx := context.Background()
		var out [2]store.Store
		for i := range out {
			s, err := postgres.Open(ctx, vaulttest.PGDSN, &postgres.Options{Schema: schema})
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			out[i] = s
		}
		return out[0], out[1]
	}
	t.Fatalf("unknown store %q", kind)
	return nil, nil
}

// openWritePathPair opens the pair on kind; options adjust both Vaults'
// Options.
func openWritePathPair(t *testing.T, kind string, options ...func(*tokenvault.Options)) *writePathPair {
	t.Helper()
	sa, sb := openSharedStores(t, kind)
	key := vaulttest.NewMasterKey()
	p := &writePathPair{recA: new(recorder), recB: new(recorder)}
	open := func(s store.Store, rec *recorder) *tokenvault.Vault {
		opts := tokenvault.Options{
			Store:     recordStore(s, rec),
			Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
			Keys:      tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1},
			Outbound:  tokenvault.OutboundOptions{AllowPrivateDestinations: true},
		}
		for _, o := range options {
			o(&opts)
		}
		v, err := tokenvault.Open(context.Background(), opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	p.a = open(sa, p.recA)
	p.b = open(sb, p.recB)
	ctx := context.Background()
	boot, err := p.a.CreateTenant(ctx, tokenvault.CreateTenantRequest{
		Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatalf("CreateTenant on A: %v", err)
	}
	p.boot = boot
	p.app, err = p.a.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "writer", Type: tokenvault.Private,
		Permissions: []string{"token:create", "token:read", "token:update", "token:delete"},
	})
	if err != nil {
		t.Fatalf("CreateApplication on A: %v", err)
	}
	return p
}

// randomValue is a value no other call tokenizes.
func randomValue() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// writePathContainer is where the tests' tokens go: two levels deep, so
// that a write path keeping an entry per ancestor container shows it.
const writePathContainer = "/acme/cards/"

// tokenizeOn runs goroutines goroutines on v, each tokenizing perG random
// values under ctx, and returns the ids created.
func tokenizeOn(t *testing.T, ctx context.Context, v *tokenvault.Vault, key tokenvault.Credential, goroutines, perG int) []string {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range perG {
				out, err := v.Tokenize(ctx, key, tokenvault.TokenRequest{
					Type: "token", Data: randomValue(), Containers: []string{writePathContainer},
				})
				if err != nil {
					t.Errorf("Tokenize: %v", err)
					return
				}
				tok, ok := out.(*tokenvault.Token)
				if !ok {
					t.Errorf("Tokenize(TokenRequest) = %T, want *tokenvault.Token", out)
					return
				}
				mu.Lock()
				ids = append(ids, tok.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ids
}

// writtenKeys is every key the commits wrote, with how many commits
// wrote it.
func writtenKeys(commits []commitWrites) map[string]int {
	out := map[string]int{}
	for _, c := range commits {
		for _, k := range c.keys() {
			out[k]++
		}
	}
	return out
}

// shapeCounts renders keys as their shapes (keyShape), each with how
// many keys have it, most first.
func shapeCounts(keys []string, tid string) string {
	n := map[string]int{}
	for _, k := range keys {
		n[keyShape(k, tid)]++
	}
	shapes := slices.Sorted(maps.Keys(n))
	slices.SortStableFunc(shapes, func(a, b string) int { return n[b] - n[a] })
	var sb strings.Builder
	for _, s := range shapes {
		fmt.Fprintf(&sb, "\n\t%4d  %s", n[s], s)
	}
	return sb.String()
}

// maxTokenCommitKeys bounds the keys one token's tokenize commit may
// write besides the rows named by its own instance: its record, its own
// index entries (its fingerprint on a shared store, an id index), its
// audit line, that line's index and queue entries (the log's entity
// index, the linker's queue), one list entry (by type and its own
// container) and its outbox entry: 8. Today a commit writes 11 keys on
// memory, 12 on bbolt (13 puts and a delete: the line twice, a
// chain-queue entry put and deleted) and on PostgreSQL (its fingerprint
// entry): the chain head and its sequence entry, three kept counts (the
// type, each ancestor container), list entries for the type and every
// ancestor container.
const maxTokenCommitKeys = 8

// TestWritePathTokenizeSharesNoKeys: two Vaults on one store, one tenant,
// tokenize calls on both at once. Fails if any key written by a tokenize
// commit of Vault A is also written by one of Vault B (each shared key's
// shape is printed, never a value), or read by one (got, or scanned
// over: a conflict on a serializable store), if any commit writes more than
// maxTokenCommitKeys keys other than those named by its instance, or if
// a commit writes a row named by the other instance.
func TestWritePathTokenizeSharesNoKeys(t *testing.T) {
	for _, kind := range writePathStores {
		t.Run("store="+kind, func(t *testing.T) {
			p := openWritePathPair(t, kind)
			// The tenant's first token of a shape (a type and its
			// containers) writes the shape's registry entry: once per
			// shape and tenant, ever, so two instances' first tokens of
			// a new shape may meet on it once (internal/tokens/listing).
			// Each Vault tokenizes once, unrecorded, first: what follows
			// is every later commit.
			tokenizeOn(t, context.Background(), p.a, p.app.Key, 1, 1)
			tokenizeOn(t, context.Background(), p.b, p.app.Key, 1, 1)
			ctx := markWrites(context.Background())
			const goroutines, perG = 4, 10
			var wg sync.WaitGroup
			var idsA, idsB []string
			wg.Go(func() { idsA = tokenizeOn(t, ctx, p.a, p.app.Key, goroutines, perG) })
			wg.Go(func() { idsB = tokenizeOn(t, ctx, p.b, p.app.Key, goroutines, perG) })
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			checkTwoInstances(t, "tokenize", p, p.recA.Take(), p.recB.Take(), len(idsA), len(idsB), maxTokenCommitKeys)
		})
	}
}

// maxChangeCommitKeys bounds the keys the commit of an update (of its
// metadata) or a deletion of one token may write besides its instance's
// rows: the record, its index entries (a metadata index entry removed and
// one added, its fingerprint), its line, the line's index and queue
// entries, its list entry (deleted) and its outbox entry: 8, as for a
// creation.
const maxChangeCommitKeys = 8

// TestWritePathChangesShareNoKeys is TestWritePathTokenizeSharesNoKeys
// for the commits that change a token: each Vault updates, then deletes,
// tokens it created, both at once.
func TestWritePathChangesShareNoKeys(t *testing.T) {
	for _, kind := range writePathStores {
		t.Run("store="+kind, func(t *testing.T) {
			p := openWritePathPair(t, kind)
			const goroutines, perG = 4, 10
			var idsA, idsB []string
			var wg sync.WaitGroup
			wg.Go(func() { idsA = tokenizeOn(t, context.Background(), p.a, p.app.Key, goroutines, perG) })
			wg.Go(func() { idsB = tokenizeOn(t, context.Background(), p.b, p.app.Key, goroutines, perG) })
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			p.recA.Take()
			p.recB.Take()

			ctx := markWrites(context.Background())
			var failed atomic.Bool // a call failed: the checks of the step would mislead
			change := func(v *tokenvault.Vault, ids []string, do func(v *tokenvault.Vault, id string) error) {
				var wg sync.WaitGroup
				for g := range goroutines {
					wg.Go(func() {
						for i := g; i < len(ids); i += goroutines {
							if err := do(v, ids[i]); err != nil {
								t.Error(err)
								failed.Store(true)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			update := func(v *tokenvault.Vault, id string) error {
				_, err := v.UpdateToken(ctx, p.app.Key, id, json.RawMessage(`{"metadata":{"state":"changed"}}`))
				return err
			}
			remove := func(v *tokenvault.Vault, id string) error { return v.DeleteToken(ctx, p.app.Key, id) }
			for _, step := range []struct {
				what string
				do   func(v *tokenvault.Vault, id string) error
			}{{"update", update}, {"delete", remove}} {
				wg.Go(func() { change(p.a, idsA, step.do) })
				wg.Go(func() { change(p.b, idsB, step.do) })
				wg.Wait()
				if failed.Load() {
					t.FailNow()
				}
				checkTwoInstances(t, step.what, p, p.recA.Take(), p.recB.Take(), len(idsA), len(idsB), maxChangeCommitKeys)
			}
		})
	}
}

// checkTwoInstances checks the commits of calls of kind what on A (ca,
// for na calls) and on B (cb, nb): no key written by both, none written
// by one and read by the other, none written by several commits of one
// unless its instance owns it, none of the other instance's rows, and at
// most bound keys a commit besides its instance's rows.
func checkTwoInstances(t *testing.T, what string, p *writePathPair, ca, cb []commitWrites, na, nb, bound int) {
	t.Helper()
	tid := p.boot.Tenant.ID
	if len(ca) < na || len(cb) < nb {
		t.Fatalf("recorded %d %s commits on A and %d on B for %d and %d calls: the recording misses commits",
			len(ca), what, len(cb), na, nb)
	}
	wa, wb := writtenKeys(ca), writtenKeys(cb)
	var shared []string
	for k := range wa {
		if wb[k] > 0 {
			shared = append(shared, k)
		}
	}
	if len(shared) > 0 {
		t.Errorf("%d keys are written by %s commits of both Vaults (shape: keys of that shape):%s",
			len(shared), what, shapeCounts(shared, tid))
	}
	// A key one instance's commit read (got, or scanned past) that the
	// other's commits write: on a serializable store a conflict as sure
	// as a shared write.
	checkCrossReads(t, what, "A", "B", ca, wb, tid)
	checkCrossReads(t, what, "B", "A", cb, wa, tid)
	// Within one instance, a key several commits write is fine only
	// when the instance owns it (its id names it).
	checkCommitKeys(t, what, "A", ca, vaulttest.Instance(p.a), vaulttest.Instance(p.b), tid, bound)
	checkCommitKeys(t, what, "B", cb, vaulttest.Instance(p.b), vaulttest.Instance(p.a), tid, bound)
}

// checkCrossReads fails t for each key that a commit of reader read and
// that the other instance's commits wrote (written), keys both wrote
// aside (reported as shared already).
func checkCrossReads(t *testing.T, what, reader, writer string, commits []commitWrites, written map[string]int, tid string) {
	t.Helper()
	var read []string
	for k := range written {
		for _, c := range commits {
			if c.reads(k) && !slices.Contains(c.keys(), k) {
				read = append(read, k)
				break
			}
		}
	}
	if len(read) > 0 {
		t.Errorf("%d keys written by %s commits of %s are read (got, or in a scanned range) by %[2]s commits of %s:%s",
			len(read), what, writer, reader, shapeCounts(read, tid))
	}
}

// checkCommitKeys holds the commits of instance name (whose id is own;
// the other's is other) to bound keys each besides its own
// instance's rows, to none of the other instance's rows, and to no key
// that several of them write unless its instance owns it (a row every
// token's commit writes is a lock on the tenant, whichever instance
// writes it).
func checkCommitKeys(t *testing.T, what, name string, commits []commitWrites, own, other, tid string, bound int) {
	t.Helper()
	var largest commitWrites
	largestN := -1
	var foreign []string
	for _, c := range commits {
		var n int
		for _, k := range c.keys() {
			switch {
			case strings.Contains(k, other):
				foreign = append(foreign, k)
			case strings.Contains(k, own):
			default:
				n++
			}
		}
		if n > largestN {
			largest, largestN = c, n
		}
	}
	if len(foreign) > 0 {
		t.Errorf("%s commits of %s write %d rows named by the other instance:%s", what, name, len(foreign), shapeCounts(foreign, tid))
	}
	var repeated []string
	for k, n := range writtenKeys(commits) {
		if n > 1 && !strings.Contains(k, own) {
			repeated = append(repeated, k)
		}
	}
	if len(repeated) > 0 {
		t.Errorf("%d keys are each written by several %s commits of %s and not named by its instance:%s",
			len(repeated), what, name, shapeCounts(repeated, tid))
	}
	all := largest.keys()
	if largestN > bound {
		t.Errorf("a %s commit of %s writes %d keys (%d puts, %d deletes) besides its instance's rows, want at most %d:%s",
			what, name, largestN, len(largest.puts), len(largest.deletes), bound, shapeCounts(all, tid))
	} else {
		t.Logf("the largest %s commit of %s: %d puts, %d deletes, %d keys, %d besides its instance's rows:%s",
			what, name, len(largest.puts), len(largest.deletes), len(all), largestN, shapeCounts(all, tid))
	}
}
