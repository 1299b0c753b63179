package storetest

import (
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

func testGetMissing(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, kv{"present", "v"})
	view(t, s, func(tx store.Tx) error {
		wantGet(t, tx, "missing", nil)
		wantGet(t, tx, "presen", nil)
		wantGet(t, tx, "present\x00", nil)
		wantGet(t, tx, "", nil)
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		wantGet(t, tx, "missing", nil)
		return nil
	})
}

func testPutGet(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, kv{"k", "v1"}, kv{"\x00", "zero"}, kv{"\xff", "ff"})
	seed(t, s, kv{"k", "v2"})
	view(t, s, func(tx store.Tx) error {
		wantGet(t, tx, "k", []byte("v2"))
		wantGet(t, tx, "\x00", []byte("zero"))
		wantGet(t, tx, "\xff", []byte("ff"))
		return nil
	})
}

// testEmptyValue checks that an empty value is stored and read back as a
// non-nil empty slice, which is how callers tell it from a missing key.
func testEmptyValue(t *testing.T, su *suite) {
	for _, tc := range []struct {
		name  string
		value []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := su.fresh(t)
			update(t, s, func(tx store.Tx) error {
				if err := tx.Put([]byte("k"), tc.value); err != nil {
					t.Errorf("Put(%q, %#v) = %v", "k", tc.value, err)
				}
				wantGet(t, tx, "k", []byte{})
				return nil
			})
			view(t, s, func(tx store.Tx) error {
				wantGet(t, tx, "k", []byte{})
				n := 0
				err := tx.Scan(nil, nil, 0, func(k, v []byte) error {
					n++
					if string(k) != "k" || len(v) != 0 {
						t.Errorf("Scan visited (%q, %q), want (%q, empty)", k, v, "k")
					}
					return nil
				})
				if err != nil || n != 1 {
					t.Errorf("Scan() visited %d keys, error %v; want 1, nil", n, err)
				}
				return nil
			})
		})
	}
}

// testEmptyKey checks that an empty key is rejected. store.go does not say
// so, but bbolt cannot store one and backends must agree.
func testEmptyKey(t *testing.T, su *suite) {
	s := su.fresh(t)
	update(t, s, func(tx store.Tx) error {
		if err := tx.Put(nil, []byte("v")); err == nil {
			t.Errorf("Put(nil key) = nil, want error")
		}
		if err := tx.Put([]byte{}, []byte("v")); err == nil {
			t.Errorf("Put(empty key) = nil, want error")
		}
		return nil
	})
	wantContents(t, s, nil)
}

func testDeleteMissing(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, kv{"k", "v"})
	update(t, s, func(tx store.Tx) error {
		for _, key := range []string{"missing", "k", "k", ""} {
			if err := tx.Delete([]byte(key)); err != nil {
				t.Errorf("Delete(%q) = %v, want nil", key, err)
			}
		}
		return nil
	})
	wantContents(t, s, nil)
}

func testReadYourWrites(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, kv{"k/gone", "g"}, kv{"k/old", "o"}, kv{"other", "x"})
	update(t, s, func(tx store.Tx) error {
		must(t, tx.Put([]byte("k/new"), []byte("n")))
		must(t, tx.Put([]byte("k/old"), []byte("o2")))
		must(t, tx.Delete([]byte("k/gone")))
		must(t, tx.Put([]byte("k/tmp"), []byte("t")))
		must(t, tx.Delete([]byte("k/tmp")))
		wantGet(t, tx, "k/new", []byte("n"))
		wantGet(t, tx, "k/old", []byte("o2"))
		wantGet(t, tx, "k/gone", nil)
		wantGet(t, tx, "k/tmp", nil)
		wantPairs(t, scanAll(t, tx, []byte("k/"), nil, 0), []kv{{"k/new", "n"}, {"k/old", "o2"}})
		// A write after a scan is seen by the next scan.
		must(t, tx.Put([]byte("k/a"), []byte("a")))
		wantPairs(t, scanAll(t, tx, []byte("k/"), nil, 0), []kv{{"k/a", "a"}, {"k/new", "n"}, {"k/old", "o2"}})
		return nil
	})
	wantContents(t, s, []kv{{"k/a", "a"}, {"k/new", "n"}, {"k/old", "o2"}, {"other", "x"}})
}
