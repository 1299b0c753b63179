package barrier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// optimisticStore runs every Update the way the root's updateOptimistic does (ViewSnapshot, Apply): the
// function first in a View through a snapshotTx, then, in the Update, the
// overlay applied if every read still answers the same, or the function
// again. The conformance suite on it checks snapshotTx against the store
// contract, its concurrent writers the conflict detection.
type optimisticStore struct {
	store.Store
	applied, rerun atomic.Int64
	// inflight lets Close wait for Updates between their two
	// transactions, as the contract wants of Close.
	inflight sync.RWMutex
}

func (s *optimisticStore) Close() error {
	s.inflight.Lock()
	defer s.inflight.Unlock()
	return s.Store.Close()
}

func (s *optimisticStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.inflight.RLock()
	defer s.inflight.RUnlock()
	var snap *snapshotTx
	if err := s.Store.View(ctx, func(tx store.Tx) error {
		snap = newSnapshotTx(tx)
		return fn(snap)
	}); err != nil {
		return err
	}
	return s.Store.Update(ctx, func(tx store.Tx) error {
		ok, err := snap.stillReads(tx)
		if err != nil {
			return err
		}
		if ok {
			s.applied.Add(1)
			return snap.apply(tx)
		}
		s.rerun.Add(1)
		return fn(tx)
	})
}

func TestOptimisticConformanceMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return &optimisticStore{Store: memory.New()} })
}

func TestOptimisticConformanceBolt(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return &optimisticStore{Store: s}
	})
}

// TestSnapshotTxMatchesTx runs random sequences of Gets, Puts, Deletes,
// Scans and ScanReverses (with prefixes, starting points or bounds, limits
// and early stops) through a
// snapshotTx over a seeded store and through a plain write transaction of
// the same store, and requires every answer to be the same; then the
// overlay, applied, must leave what the plain transaction committed.
func TestSnapshotTxMatchesTx(t *testing.T) {
	keys := []string{"a", "a/1", "a/2", "a/3", "a/30", "b", "b/1", "b/2", "c/x", "c/y", "d"}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		ctx := context.Background()
		seeded := func() store.Store {
			s := memory.New()
			rs := rand.New(rand.NewPCG(seed, 2))
			if err := s.Update(ctx, func(tx store.Tx) error {
				for _, k := range keys {
					if rs.IntN(2) == 0 {
						if err := tx.Put([]byte(k), fmt.Appendf(nil, "v0-%s", k)); err != nil {
							return err
						}
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return s
		}
		type op struct {
			kind          int
			key, after    string
			limit, stopAt int
			empty         bool
		}
		ops := make([]op, 1+r.IntN(25))
		for i := range ops {
			after := ""
			if r.IntN(2) == 0 {
				after = keys[r.IntN(len(keys))]
			}
			ops[i] = op{kind: r.IntN(5), key: keys[r.IntN(len(keys))], after: after,
				limit: r.IntN(4), stopAt: r.IntN(5), empty: r.IntN(5) == 0}
		}
		run := func(tx store.Tx) []string {
			var out []string
			for i, o := range ops {
				switch o.kind {
				case 0:
					v, err := tx.Get([]byte(o.key))
					out = append(out, fmt.Sprintf("get %s = %q nil=%v %v", o.key, v, v == nil, err))
				case 1:
					v := fmt.Appendf(nil, "v%d", i)
					if o.empty {
						v = nil
					}
					out = append(out, fmt.Sprintf("put %v", tx.Put([]byte(o.key), v)))
				case 2:
					out = append(out, fmt.Sprintf("delete %v", tx.Delete([]byte(o.key))))
				case 3:
					prefix := o.key[:1]
					var after []byte
					if o.after != "" {
						after = []byte(o.after)
					}
					n := 0
					err := tx.Scan([]byte(prefix), after, o.limit, func(k, v []byte) error {
						out = append(out, fmt.Sprintf("  %s=%q", k, v))
						if n++; o.stopAt > 0 && n == o.stopAt {
							return store.ErrStop
						}
						return nil
					})
					out = append(out, fmt.Sprintf("scan %s after %q limit %d stop %d: %v", prefix, o.after, o.limit, o.stopAt, err))
				case 4:
					prefix := o.key[:1]
					var before []byte // o.after serves as the bound
					if o.after != "" {
						before = []byte(o.after)
					}
					n := 0
					err := tx.ScanReverse([]byte(prefix), before, o.limit, func(k, v []byte) error {
						out = append(out, fmt.Sprintf("  %s=%q", k, v))
						if n++; o.stopAt > 0 && n == o.stopAt {
							return store.ErrStop
						}
						return nil
					})
					out = append(out, fmt.Sprintf("scan back %s before %q limit %d stop %d: %v", prefix, o.after, o.limit, o.stopAt, err))
				}
			}
			return out
		}
		contents := func(s store.Store) map[string]string {
			m := map[string]string{}
			if err := s.View(ctx, func(tx store.Tx) error {
				return tx.Scan(nil, nil, 0, func(k, v []byte) error { m[string(k)] = string(v); return nil })
			}); err != nil {
				t.Fatal(err)
			}
			return m
		}

		plain := seeded()
		var want []string
		if err := plain.Update(ctx, func(tx store.Tx) error { want = run(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		opt := seeded()
		var snap *snapshotTx
		var got []string
		if err := opt.View(ctx, func(tx store.Tx) error {
			snap = newSnapshotTx(tx)
			got = run(snap)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: snapshotTx answers differ (-tx +snapshotTx):\n%s", seed, diff)
		}
		if err := opt.Update(ctx, func(tx store.Tx) error {
			ok, err := snap.stillReads(tx)
			if err != nil || !ok {
				return fmt.Errorf("stillReads on an unchanged store = %v, %v", ok, err)
			}
			return snap.apply(tx)
		}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if diff := cmp.Diff(contents(plain), contents(opt)); diff != "" {
			t.Fatalf("seed %d: applied overlay differs (-tx +snapshotTx):\n%s", seed, diff)
		}
	}
}

// TestSnapshotTxNoticesChanges changes the store between the first run and
// the check in every way that would change what the first run read, and in
// ways that would not.
func TestSnapshotTxNoticesChanges(t *testing.T) {
	ctx := context.Background()
	seed := func(t *testing.T) store.Store {
		s := memory.New()
		if err := s.Update(ctx, func(tx store.Tx) error {
			for _, k := range []string{"g/1", "s/1", "s/3", "s/5", "s/7", "u/1"} {
				if err := tx.Put([]byte(k), []byte("v")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The first run reads g/1 and g/2 (missing), scans s/ after s/1 and
	// stops after s/5, and writes s/4.
	first := func(tx store.Tx) error {
		for _, k := range []string{"g/1", "g/2"} {
			if _, err := tx.Get([]byte(k)); err != nil {
				return err
			}
		}
		if err := tx.Put([]byte("s/4"), []byte("mine")); err != nil {
			return err
		}
		n := 0
		return tx.Scan([]byte("s/"), []byte("s/1"), 0, func(k, _ []byte) error {
			if n++; n == 3 { // s/3, s/4 (own), s/5
				return store.ErrStop
			}
			return nil
		})
	}
	for _, tc := range []struct {
		name   string
		change func(tx store.Tx) error
		same   bool
	}{
		{"nothing", func(store.Tx) error { return nil }, true},
		{"unread key written", func(tx store.Tx) error { return tx.Put([]byte("u/1"), []byte("w")) }, true},
		{"key after the scan's stop", func(tx store.Tx) error { return tx.Put([]byte("s/6"), []byte("w")) }, true},
		{"key before the scan's start", func(tx store.Tx) error { return tx.Put([]byte("s/0"), []byte("w")) }, true},
		{"read key changed", func(tx store.Tx) error { return tx.Put([]byte("g/1"), []byte("w")) }, false},
		{"read key deleted", func(tx store.Tx) error { return tx.Delete([]byte("g/1")) }, false},
		{"missing key created", func(tx store.Tx) error { return tx.Put([]byte("g/2"), nil) }, false},
		{"scanned key changed", func(tx store.Tx) error { return tx.Put([]byte("s/5"), []byte("w")) }, false},
		{"scanned key deleted", func(tx store.Tx) error { return tx.Delete([]byte("s/3")) }, false},
		{"last scanned key deleted", func(tx store.Tx) error { return tx.Delete([]byte("s/5")) }, false},
		{"key inserted in the scanned range", func(tx store.Tx) error { return tx.Put([]byte("s/2"), []byte("w")) }, false},
		{"own key written by another", func(tx store.Tx) error { return tx.Put([]byte("s/4"), []byte("w")) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := seed(t)
			var snap *snapshotTx
			if err := s.View(ctx, func(tx store.Tx) error { snap = newSnapshotTx(tx); return first(snap) }); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, tc.change); err != nil {
				t.Fatal(err)
			}
			var same bool
			if err := s.View(ctx, func(tx store.Tx) error {
				var err error
				same, err = snap.stillReads(tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if same != tc.same {
				t.Errorf("stillReads = %v, want %v", same, tc.same)
			}
		})
	}
}

// TestOptimisticStoreRetriesConflicts makes sure the conformance suite's
// concurrent writers did exercise the rerun: with every Update a
// read-modify-write of one counter, first runs conflict.
func TestOptimisticStoreRetriesConflicts(t *testing.T) {
	s := &optimisticStore{Store: memory.New()}
	ctx := context.Background()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if err = s.Update(ctx, func(tx store.Tx) error {
					v, err := tx.Get([]byte("n"))
					if err != nil {
						return err
					}
					return tx.Put([]byte("n"), append(v, 'x'))
				}); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.View(ctx, func(tx store.Tx) error {
		v, err := tx.Get([]byte("n"))
		n = len(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 400 {
		t.Errorf("counter = %d, want 400 (lost updates)", n)
	}
	if s.applied.Load()+s.rerun.Load() != 400 {
		t.Errorf("applied %d + rerun %d, want 400", s.applied.Load(), s.rerun.Load())
	}
	t.Logf("applied %d, rerun %d", s.applied.Load(), s.rerun.Load())
}
