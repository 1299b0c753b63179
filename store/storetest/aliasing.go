package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// testAliasing checks that the store never shares memory with slices it was
// given or gave out.
func testAliasing(t *testing.T, su *suite) {
	s := su.fresh(t)
	key := []byte("key")
	val := []byte("value")
	update(t, s, func(tx store.Tx) error {
		key, val = []byte("key"), []byte("value") // fn may run again
		must(t, tx.Put(key, val))
		// Scribble before commit: the store must have copied already.
		key[0], val[0] = 'X', 'X'
		wantGet(t, tx, "key", []byte("value"))
		wantGet(t, tx, "Xey", nil)

		got, err := tx.Get([]byte("key"))
		must(t, err)
		if len(got) > 0 {
			got[0] = 'Z'
		}
		wantGet(t, tx, "key", []byte("value"))
		return nil
	})
	copy(key, "zzz")
	copy(val, "zzzzz")
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Get([]byte("key"))
		must(t, err)
		if len(got) > 0 {
			got[0] = 'Z'
		}
		wantGet(t, tx, "key", []byte("value"))
		return nil
	})
	wantContents(t, s, []kv{{"key", "value"}})
}

// testScanCopiesSurviveWrites checks that copies a caller takes of Scan's
// slices stay correct after later writes, in the same transaction and in
// later ones: the copies, not the store's memory, must be what they hold.
func testScanCopiesSurviveWrites(t *testing.T, su *suite) {
	s := su.fresh(t)
	var want []kv
	for i := range 50 {
		want = append(want, kv{fmt.Sprintf("k%02d", i), fmt.Sprintf("value-%02d", i)})
	}
	seed(t, s, want...)

	var keys, vals [][]byte
	collect := func(tx store.Tx) error {
		keys, vals = nil, nil
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			keys = append(keys, bytes.Clone(k))
			vals = append(vals, bytes.Clone(v))
			return nil
		})
	}
	check := func(when string) {
		t.Helper()
		if len(keys) != len(want) {
			t.Fatalf("%s: collected %d pairs, want %d", when, len(keys), len(want))
		}
		for i, w := range want {
			if string(keys[i]) != w.K || string(vals[i]) != w.V {
				t.Errorf("%s: copy %d = (%q, %q), want (%q, %q)", when, i, keys[i], vals[i], w.K, w.V)
			}
		}
	}

	view(t, s, collect)
	overwrite := func(tx store.Tx) error {
		for i, w := range want {
			if i%3 == 0 {
				if err := tx.Delete([]byte(w.K)); err != nil {
					return err
				}
				continue
			}
			if err := tx.Put([]byte(w.K), bytes.Repeat([]byte{'#'}, 100)); err != nil {
				return err
			}
		}
		return nil
	}
	update(t, s, overwrite)
	check("after a later Update")

	seed(t, s, want...)
	update(t, s, func(tx store.Tx) error {
		if err := collect(tx); err != nil {
			return err
		}
		return overwrite(tx)
	})
	check("after writes in the same Update")
}
