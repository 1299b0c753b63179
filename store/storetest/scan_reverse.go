package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// scanReverseAll collects what ScanReverse visits.
func scanReverseAll(t *testing.T, tx store.Tx, prefix, before []byte, limit int) []kv {
	t.Helper()
	var got []kv
	err := tx.ScanReverse(prefix, before, limit, func(k, v []byte) error {
		got = append(got, kv{string(k), string(v)})
		return nil
	})
	if err != nil {
		t.Errorf("ScanReverse(%q, %q, %d) = %v, want nil", prefix, before, limit, err)
	}
	return got
}

// reverseOracle is what ScanReverse must visit, from a forward Scan of
// the whole prefix.
func reverseOracle(t *testing.T, tx store.Tx, prefix, before []byte, limit int) []kv {
	t.Helper()
	var want []kv
	for _, p := range scanAll(t, tx, prefix, nil, 0) {
		if before == nil || p.K < string(before) {
			want = append(want, p)
		}
	}
	slices.Reverse(want)
	if limit > 0 && len(want) > limit {
		want = want[:limit]
	}
	return want
}

// testScanReverse holds ScanReverse to the forward Scan, reversed, on
// awkward keys: every prefix of the Scan tests, bounds inside, below,
// above and at the edges of the prefix, with and without a limit.
func testScanReverse(t *testing.T, su *suite) {
	s := su.fresh(t)
	keys := append(slices.Clone(prefixKeys), orderKeys...)
	seedKeys(t, s, keys)
	prefixes := [][]byte{nil, {}, []byte("a"), []byte("a/"), []byte("a/2"), []byte("a/1/"), []byte("b/"),
		[]byte("c"), []byte("\xff"), []byte("\xff\xff"), []byte("\xff\xff\xff"), []byte("\x00")}
	befores := [][]byte{nil, {}, []byte("\x00"), []byte("a"), []byte("a/"), []byte("a/2"), []byte("a/2/x"),
		[]byte("a/20"), []byte("a0"), []byte("a\xff"), []byte("a\xff\xff"), []byte("b"), []byte("b/1"),
		[]byte("c"), []byte("\xff"), []byte("\xff\xff"), []byte("\xff\xff\xff\xff")}
	check := func(tx store.Tx) {
		for _, prefix := range prefixes {
			for _, before := range befores {
				for _, limit := range []int{0, -1, 1, 2, 100} {
					got := scanReverseAll(t, tx, prefix, before, limit)
					want := reverseOracle(t, tx, prefix, before, limit)
					if !slices.Equal(got, want) {
						t.Errorf("ScanReverse(%q, %q, %d) = %q, want %q", prefix, before, limit, got, want)
					}
				}
			}
		}
	}
	view(t, s, func(tx store.Tx) error { check(tx); return nil })
	update(t, s, func(tx store.Tx) error { check(tx); return nil })
}

// testScanReverseWrites: writes made earlier in the transaction are
// visible to ScanReverse, deletions too, before the commit and after.
func testScanReverseWrites(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, []string{"k1", "k3", "k5"})
	want := []string{"k6", "k5", "k4", "k1"}
	keysOf := func(ps []kv) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.K)
		}
		return out
	}
	update(t, s, func(tx store.Tx) error {
		for _, k := range []string{"k4", "k6"} {
			if err := tx.Put([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		if err := tx.Delete([]byte("k3")); err != nil {
			return err
		}
		wantKeys(t, "ScanReverse in Update", keysOf(scanReverseAll(t, tx, []byte("k"), nil, 0)), want)
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		wantKeys(t, "ScanReverse after commit", keysOf(scanReverseAll(t, tx, []byte("k"), nil, 0)), want)
		return nil
	})
}

// testScanReverseStop: ErrStop ends the walk without an error, any
// other error ends it with that error.
func testScanReverseStop(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, []string{"k0", "k1", "k2", "k3", "k4"})
	for _, tt := range []struct {
		err, wantErr error
	}{{store.ErrStop, nil}, {errSentinel, errSentinel}} {
		view(t, s, func(tx store.Tx) error {
			visited := 0
			err := tx.ScanReverse([]byte("k"), nil, 0, func(k, v []byte) error {
				visited++
				if visited == 2 {
					return tt.err
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) || visited != 2 {
				t.Errorf("ScanReverse stopped by %v = %v after %d keys, want %v after 2", tt.err, err, visited, tt.wantErr)
			}
			return nil
		})
	}
}

// testScanReverseLarge walks more keys than a backend reads at once, from
// the end and from a bound in the middle.
func testScanReverseLarge(t *testing.T, su *suite) {
	const n = 3000
	s := su.fresh(t)
	key := func(i int) string { return fmt.Sprintf("big/%05d", i) }
	var keys []string
	for i := range n {
		keys = append(keys, key(i))
	}
	seedKeys(t, s, append(keys, "bif", "bih"))
	view(t, s, func(tx store.Tx) error {
		for _, tt := range []struct {
			before []byte
			limit  int
			from   int // the first key visited
			count  int
		}{
			{nil, 0, n - 1, n},
			{[]byte(key(2000)), 0, 1999, 2000},
			{[]byte(key(2000)), 700, 1999, 700},
			{[]byte("big/01000x"), 3, 1000, 3},
		} {
			got := scanReverseAll(t, tx, []byte("big/"), tt.before, tt.limit)
			if len(got) != tt.count {
				t.Errorf("ScanReverse(big/, %q, %d) visited %d keys, want %d", tt.before, tt.limit, len(got), tt.count)
				continue
			}
			for i, p := range got {
				if p.K != key(tt.from-i) || p.V != "v"+p.K {
					t.Errorf("ScanReverse(big/, %q, %d) visit %d = %q, want %q", tt.before, tt.limit, i, p.K, key(tt.from-i))
					break
				}
			}
		}
		return nil
	})
}
