package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault/store"
)

// orderKeys are deliberately awkward for anything that is not a plain byte
// comparison: NUL bytes, 0xff bytes, keys that are prefixes of others, and
// bytes on either side of 0x80 (signed versus unsigned compare).
var orderKeys = []string{
	"\x00", "\x00\x00", "\x00\xff", "\x01",
	"a", "a\x00", "a\x00\x00", "a\x7f", "a\x80", "a\xff", "ab", "b",
	"\x7f", "\x80", "\xfe", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
}

func testScanOrder(t *testing.T, su *suite) {
	s := su.fresh(t)
	want := slices.Sorted(slices.Values(orderKeys))

	// Insert in an order that is neither sorted nor reverse sorted.
	update(t, s, func(tx store.Tx) error {
		for i := range orderKeys {
			k := orderKeys[(i*7)%len(orderKeys)]
			if err := tx.Put([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		// Before commit, too.
		wantKeys(t, "in Update", scanKeys(t, tx, nil, nil, 0), want)
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		got := scanAll(t, tx, nil, nil, 0)
		var keys []string
		for _, p := range got {
			keys = append(keys, p.K)
			if p.V != "v"+p.K {
				t.Errorf("Scan value for %q = %q, want %q", p.K, p.V, "v"+p.K)
			}
		}
		wantKeys(t, "in View", keys, want)
		return nil
	})
}

var prefixKeys = []string{
	"a", "a/", "a/1", "a/2", "a/2/x", "a0", "a\xff",
	"b/", "b/1", "\xff", "\xff\xff/1",
}

func testScanPrefix(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, prefixKeys)
	tests := []struct {
		prefix []byte
		want   []string
	}{
		{[]byte("a/"), []string{"a/", "a/1", "a/2", "a/2/x"}},
		{[]byte("a"), []string{"a", "a/", "a/1", "a/2", "a/2/x", "a0", "a\xff"}},
		{[]byte("a/2"), []string{"a/2", "a/2/x"}},
		{[]byte("a/1/"), nil},
		{[]byte("b/"), []string{"b/", "b/1"}},
		{[]byte("c"), nil},
		{[]byte("\xff"), []string{"\xff", "\xff\xff/1"}},
		{[]byte("\xff\xff"), []string{"\xff\xff/1"}},
		{[]byte("\xff\xff\xff"), nil},
		{[]byte("\x00"), nil},
		{[]byte{}, prefixKeys},
		{nil, prefixKeys},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.prefix), func(t *testing.T) {
			view(t, s, func(tx store.Tx) error {
				got := scanKeys(t, tx, tt.prefix, nil, 0)
				wantKeys(t, fmt.Sprintf("Scan(%q, nil, 0)", tt.prefix), got, tt.want)
				return nil
			})
		})
	}
}

func testScanAfter(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, []string{"o/z", "p", "p/a", "p/b", "p/c", "p/d", "q/a"})
	all := []string{"p/a", "p/b", "p/c", "p/d"}
	tests := []struct {
		name          string
		prefix, after []byte
		want          []string
	}{
		{"nil is the start", []byte("p/"), nil, all},
		{"empty is the start", []byte("p/"), []byte{}, all},
		{"the prefix itself", []byte("p/"), []byte("p/"), all},
		{"before the prefix", []byte("p/"), []byte("a"), all},
		{"first key", []byte("p/"), []byte("p/a"), []string{"p/b", "p/c", "p/d"}},
		{"middle key", []byte("p/"), []byte("p/b"), []string{"p/c", "p/d"}},
		{"absent key", []byte("p/"), []byte("p/bb"), []string{"p/c", "p/d"}},
		{"just past a key", []byte("p/"), []byte("p/a\x00"), []string{"p/b", "p/c", "p/d"}},
		{"last key", []byte("p/"), []byte("p/d"), nil},
		{"past the end", []byte("p/"), []byte("p/z"), nil},
		{"beyond the prefix", []byte("p/"), []byte("q"), nil},
		{"no prefix", nil, []byte("p/d"), []string{"q/a"}},
		{"no prefix, middle", nil, []byte("p"), []string{"p/a", "p/b", "p/c", "p/d", "q/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx store.Tx) error {
				got := scanKeys(t, tx, tt.prefix, tt.after, 0)
				wantKeys(t, fmt.Sprintf("Scan(%q, %q, 0)", tt.prefix, tt.after), got, tt.want)
				return nil
			})
		})
	}
}

func testScanLimit(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, []string{"j", "k0", "k1", "k2", "k3", "k4", "l"})
	all := []string{"k0", "k1", "k2", "k3", "k4"}
	tests := []struct {
		limit int
		after []byte
		want  []string
	}{
		{0, nil, all},
		{-1, nil, all},
		{-100, nil, all},
		{1, nil, []string{"k0"}},
		{3, nil, []string{"k0", "k1", "k2"}},
		{5, nil, all},
		{6, nil, all},
		{3, []byte("k0"), []string{"k1", "k2", "k3"}},
		{3, []byte("k2"), []string{"k3", "k4"}},
		{1, []byte("k4"), nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("limit=%d,after=%q", tt.limit, tt.after), func(t *testing.T) {
			view(t, s, func(tx store.Tx) error {
				got := scanKeys(t, tx, []byte("k"), tt.after, tt.limit)
				wantKeys(t, fmt.Sprintf("Scan(%q, %q, %d)", "k", tt.after, tt.limit), got, tt.want)
				return nil
			})
		})
	}
}

func testScanStop(t *testing.T, su *suite) {
	s := su.fresh(t)
	seedKeys(t, s, []string{"k0", "k1", "k2", "k3", "k4"})
	tests := []struct {
		name      string
		failAt    int // index of the key whose callback returns err
		err       error
		wantErr   error
		wantVisit int
	}{
		{"ErrStop on first", 0, store.ErrStop, nil, 1},
		{"ErrStop in middle", 2, store.ErrStop, nil, 3},
		{"ErrStop on last", 4, store.ErrStop, nil, 5},
		{"error on first", 0, errSentinel, errSentinel, 1},
		{"error in middle", 2, errSentinel, errSentinel, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(tx store.Tx) {
				visited := 0
				err := tx.Scan([]byte("k"), nil, 0, func(k, v []byte) error {
					visited++
					if visited-1 == tt.failAt {
						return tt.err
					}
					return nil
				})
				if !errors.Is(err, tt.wantErr) { // errors.Is(err, nil) is err == nil
					t.Errorf("Scan() = %v, want %v", err, tt.wantErr)
				}
				if visited != tt.wantVisit {
					t.Errorf("Scan() visited %d keys, want %d", visited, tt.wantVisit)
				}
			}
			view(t, s, func(tx store.Tx) error { check(tx); return nil })
			update(t, s, func(tx store.Tx) error { check(tx); return nil })
		})
	}

	// A Scan error returned from fn ends the transaction with that error.
	err := s.View(t.Context(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error { return errSentinel })
	})
	if !errors.Is(err, errSentinel) {
		t.Errorf("View(Scan returning error) = %v, want %v", err, errSentinel)
	}
}

func testLargeBatch(t *testing.T, su *suite) {
	const n = 10_000
	s := su.fresh(t)
	key := func(i int) []byte { return fmt.Appendf(nil, "big/%05d", i) }
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 64) }

	checkAll := func(tx store.Tx) {
		i := 0
		err := tx.Scan([]byte("big/"), nil, 0, func(k, v []byte) error {
			if i < n && (!bytes.Equal(k, key(i)) || !bytes.Equal(v, value(i))) {
				t.Errorf("Scan visit %d = (%q, %x), want (%q, %x)", i, k, v, key(i), value(i))
				return errSentinel
			}
			i++
			return nil
		})
		if err != nil {
			t.Errorf("Scan() = %v", err)
		}
		if i != n {
			t.Errorf("Scan() visited %d keys, want %d", i, n)
		}
	}
	update(t, s, func(tx store.Tx) error {
		// Insert out of order.
		for j := range n {
			i := (j * 7919) % n // 7919 is prime, so this is a permutation
			if err := tx.Put(key(i), value(i)); err != nil {
				return err
			}
		}
		checkAll(tx)
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		checkAll(tx)
		var want []string
		for i := 5000; i < 5100; i++ {
			want = append(want, string(key(i)))
		}
		got := scanKeys(t, tx, []byte("big/"), key(4999), 100)
		wantKeys(t, "Scan(big/, big/04999, 100)", got, want)
		return nil
	})
}

func seedKeys(t *testing.T, s store.Store, keys []string) {
	t.Helper()
	var pairs []kv
	for _, k := range keys {
		pairs = append(pairs, kv{k, "v" + k})
	}
	seed(t, s, pairs...)
}

func wantKeys(t *testing.T, what string, got, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s keys mismatch (-want +got):\n%s", what, diff)
	}
}
