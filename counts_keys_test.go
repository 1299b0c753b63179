package tokenvault_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store"
)

// recordingStore wraps a store and records the keys written by the
// Updates whose context carries recordMark, and by the writes done once
// per store transaction (store.PreCommit), which it passes through.
type recordingStore struct {
	store.Store
	mu     sync.Mutex
	keys   map[string]bool
	writes map[store.PreCommitWrite]*recordingWrite
}

// recordMark marks a context whose Updates a recordingStore records.
type recordMark struct{}

// singleRecordingStore is a recordingStore over a store one process
// holds, which says so.
type singleRecordingStore struct {
	*recordingStore
	store.SingleProcess
}

// newRecordingStore wraps s, keeping what it tells the Vault about
// itself (store.SingleProcess).
func newRecordingStore(s store.Store) (store.Store, *recordingStore) {
	r := &recordingStore{Store: s, keys: map[string]bool{}, writes: map[store.PreCommitWrite]*recordingWrite{}}
	if sp, ok := s.(store.SingleProcess); ok {
		return singleRecordingStore{r, sp}, r
	}
	return r, r
}

func (r *recordingStore) record(k []byte) {
	r.mu.Lock()
	r.keys[string(k)] = true
	r.mu.Unlock()
}

// recorded returns the keys recorded so far.
func (r *recordingStore) recorded() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.keys)
}

func (r *recordingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	marked := ctx.Value(recordMark{}) != nil
	return r.Store.Update(ctx, func(tx store.Tx) error { return fn(r.wrapTx(tx, marked)) })
}

// wrapTx wraps tx, keeping the store.Generation of a shared store's.
func (r *recordingStore) wrapTx(tx store.Tx, marked bool) store.Tx {
	rt := &recordingTx{Tx: tx, r: r, marked: marked}
	if g, ok := tx.(store.Generation); ok {
		return &recordingGenTx{rt, g}
	}
	return rt
}

type recordingTx struct {
	store.Tx
	r      *recordingStore
	marked bool
}

type recordingGenTx struct {
	*recordingTx
	store.Generation
}

func (t *recordingTx) Put(k, v []byte) error {
	if t.marked {
		t.r.record(k)
	}
	return t.Tx.Put(k, v)
}

func (t *recordingTx) Delete(k []byte) error {
	if t.marked {
		t.r.record(k)
	}
	return t.Tx.Delete(k)
}

// AddPreCommit passes part on, to a write that records what it writes
// (one per write w, so that the store still does it once).
func (t *recordingTx) AddPreCommit(w store.PreCommitWrite, part any) error {
	pc, ok := t.Tx.(store.PreCommit)
	if !ok {
		return fmt.Errorf("%T is not a store.PreCommit", t.Tx)
	}
	t.r.mu.Lock()
	rw := t.r.writes[w]
	if rw == nil {
		rw = &recordingWrite{w, t.r}
		t.r.writes[w] = rw
	}
	t.r.mu.Unlock()
	return pc.AddPreCommit(rw, part)
}

type recordingWrite struct {
	w store.PreCommitWrite
	r *recordingStore
}

func (rw *recordingWrite) WritePreCommit(tx store.Tx, parts []any) error {
	return rw.w.WritePreCommit(&recordingTx{Tx: tx, r: rw.r, marked: true}, parts)
}

// TestTokenizeCommitsShareNoCountKeys: two Vaults on one store tokenize
// into one tenant, one type and one container at once; the count keys
// their commits write (recorded by a wrapper of each Vault's store) are
// all delta rows, and none is written by both. Other keys both wrote
// are logged: the audit chain and the other tenant-wide rows are not
// this test's.
func TestTokenizeCommitsShareNoCountKeys(t *testing.T) {
	recs := make([]*recordingStore, 2)
	wrap := func(i int, s store.Store) store.Store {
		w, r := newRecordingStore(s)
		recs[i] = r
		return w
	}
	forEachCountPair(t, wrap, func(t *testing.T, p *countPair) {
		app := tokenApp(t, p.a, p.boot.Application.Key)
		mctx := context.WithValue(ctx, recordMark{}, true)
		const perVault = 40
		var wg sync.WaitGroup
		for _, v := range []*tokenvault.Vault{p.a, p.b} {
			for g := range 4 {
				wg.Go(func() {
					for i := range perVault / 4 {
						body := map[string]any{"value": fmt.Sprintf("%d-%d", g, i)}
						if _, err := v.Tokenize(mctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: body, Containers: []string{"/a/"}}); err != nil {
							t.Errorf("Tokenize: %v", err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		a, b := recs[0].recorded(), recs[1].recorded()
		var counts [2]int
		var shared, sharedOther []string
		for i, keys := range []map[string]bool{a, b} {
			for k := range keys {
				if !strings.Contains(k, "/count/") {
					continue
				}
				counts[i]++
				if !strings.Contains(k, "/+/") {
					t.Errorf("a tokenize of Vault %c wrote %q: a count row that is not a delta row", 'A'+i, k)
				}
			}
		}
		for k := range a {
			if b[k] {
				if strings.Contains(k, "/count/") {
					shared = append(shared, k)
				} else {
					sharedOther = append(sharedOther, k)
				}
			}
		}
		if counts[0] == 0 || counts[1] == 0 {
			t.Fatalf("the tokenizes wrote %d and %d count keys: nothing recorded", counts[0], counts[1])
		}
		if len(shared) > 0 {
			slices.Sort(shared)
			t.Errorf("count keys written by the tokenizes of both Vaults: %q", shared)
		}
		if len(sharedOther) > 0 {
			slices.Sort(sharedOther)
			t.Logf("other keys written by both (not counts): %q", sharedOther)
		}
		if walked, total := walkTokens(t, p.a, app.Key, tokenvault.ListTokensRequest{Container: "/a/"}); walked != 2*perVault || total != 2*perVault {
			t.Errorf("ListTokens(/a/) walks %d, total_items %d; want %d", walked, total, 2*perVault)
		}
	})
}
