package vaulttest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
)

// TestRecordingStoreKeepsInterfaces: the recording wrapper implements
// exactly the optional interfaces of the store it wraps, its transactions
// store.Generation exactly when the store's do, and it records the last
// committed marked Updates only, with what they read.
func TestRecordingStoreKeepsInterfaces(t *testing.T) {
	for _, kind := range writePathStores {
		t.Run("store="+kind, func(t *testing.T) {
			if kind == "postgres" && vaulttest.PGDSN == "" {
				t.Skip(vaulttest.PGSkip)
			}
			inner, _ := openSharedStores(t, kind)
			rec := new(recorder)
			s := recordStore(inner, rec)
			for _, c := range []struct {
				name      string
				in, outer bool
			}{
				{"store.SingleProcess", is[store.SingleProcess](inner), is[store.SingleProcess](s)},
				{"store.Appender", is[store.Appender](inner), is[store.Appender](s)},
				{"store.Snapshotter", is[store.Snapshotter](inner), is[store.Snapshotter](s)},
			} {
				if c.in != c.outer {
					t.Errorf("the store implements %s: %v; the wrapper: %v", c.name, c.in, c.outer)
				}
			}

			ctx := context.Background()
			var innerGen, outerGen, innerPre, outerPre bool
			if err := inner.Update(ctx, func(tx store.Tx) error {
				innerGen, innerPre = is[store.Generation](tx), is[store.PreCommit](tx)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, func(tx store.Tx) error {
				for _, k := range []string{"writepath-test/l1", "writepath-test/l2", "writepath-test/l3"} {
					if err := tx.Put([]byte(k), nil); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			err := s.Update(markWrites(ctx), func(tx store.Tx) error {
				outerGen, outerPre = is[store.Generation](tx), is[store.PreCommit](tx)
				if _, err := tx.Get([]byte("writepath-test/got")); err != nil {
					return err
				}
				none := func(k, v []byte) error { return nil }
				if err := tx.Scan([]byte("writepath-test/s"), nil, 0, none); err != nil {
					return err
				}
				if err := tx.Scan([]byte("writepath-test/l"), nil, 1, none); err != nil {
					return err
				}
				if err := tx.ScanReverse([]byte("writepath-test/l"), nil, 1, none); err != nil {
					return err
				}
				if err := tx.Put([]byte("writepath-test/a"), []byte("1")); err != nil {
					return err
				}
				return tx.Delete([]byte("writepath-test/b"))
			})
			if err != nil {
				t.Fatal(err)
			}
			if innerPre != outerPre {
				t.Errorf("the store's transactions implement store.PreCommit: %v; the wrapper's: %v", innerPre, outerPre)
			}
			if innerGen != outerGen {
				t.Errorf("the store's transactions implement store.Generation: %v; the wrapper's: %v", innerGen, outerGen)
			}
			if err := s.Update(ctx, func(tx store.Tx) error { return tx.Put([]byte("writepath-test/unmarked"), nil) }); err != nil {
				t.Fatal(err)
			}
			failed := errors.New("rolled back")
			if err := s.Update(markWrites(ctx), func(tx store.Tx) error {
				if err := tx.Put([]byte("writepath-test/rolled-back"), nil); err != nil {
					return err
				}
				return failed
			}); !errors.Is(err, failed) {
				t.Fatalf("Update = %v, want %v", err, failed)
			}
			got := rec.Commits()
			if len(got) != 1 {
				t.Fatalf("recorded %d commits, want 1: %v", len(got), got)
			}
			want := []string{"writepath-test/a", "writepath-test/b"}
			if k := got[0].keys(); !slices.Equal(k, want) {
				t.Errorf("recorded keys %q, want %q", k, want)
			}
			for k, want := range map[string]bool{
				"writepath-test/got": true,  // got
				"writepath-test/s9":  true,  // in a whole prefix scanned
				"writepath-test/l1":  true,  // the limited scan's one key
				"writepath-test/l2":  false, // past the limited scans both ways
				"writepath-test/l3":  true,  // the reverse scan's one key
				"writepath-test/t":   false, // read by nothing
			} {
				if got := got[0].reads(k); got != want {
					t.Errorf("reads(%q) = %v, want %v", k, got, want)
				}
			}
		})
	}
}

// is reports whether v implements T.
func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
