package storetest

import (
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

var rollbackSeed = []kv{{"a", "1"}, {"b", "2"}, {"c", "3"}}

// mutateAll overwrites, deletes and inserts, checking each write is visible
// inside the transaction so a rollback is known to undo real work.
func mutateAll(t *testing.T, tx store.Tx) {
	t.Helper()
	must(t, tx.Put([]byte("a"), []byte("changed")))
	must(t, tx.Delete([]byte("b")))
	must(t, tx.Put([]byte("d"), []byte("new")))
	must(t, tx.Put([]byte("d"), []byte("newer")))
	must(t, tx.Delete([]byte("c")))
	must(t, tx.Put([]byte("c"), []byte("back")))
	wantPairs(t, scanAll(t, tx, nil, nil, 0), []kv{{"a", "changed"}, {"c", "back"}, {"d", "newer"}})
}

func testRollbackOnError(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, rollbackSeed...)
	err := s.Update(t.Context(), func(tx store.Tx) error {
		mutateAll(t, tx)
		return errSentinel
	})
	if !errors.Is(err, errSentinel) {
		t.Errorf("Update() = %v, want %v", err, errSentinel)
	}
	wantContents(t, s, rollbackSeed)

	// The store is still usable.
	seed(t, s, kv{"e", "5"})
	wantContents(t, s, append(rollbackSeed[:len(rollbackSeed):len(rollbackSeed)], kv{"e", "5"}))
}

// testRollbackOnPanic accepts a backend that re-panics as well as one that
// turns the panic into an error; either way nothing may be visible.
func testRollbackOnPanic(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, rollbackSeed...)
	var (
		err       error
		recovered any
	)
	func() {
		defer func() { recovered = recover() }()
		err = s.Update(t.Context(), func(tx store.Tx) error {
			mutateAll(t, tx)
			panic(errSentinel)
		})
	}()
	if recovered == nil && err == nil {
		t.Errorf("Update() with panicking fn = nil and no panic, want a panic or an error")
	}
	wantContents(t, s, rollbackSeed)

	// The store is still usable: locks were released.
	seed(t, s, kv{"e", "5"})
	wantContents(t, s, append(rollbackSeed[:len(rollbackSeed):len(rollbackSeed)], kv{"e", "5"}))
}

func testWriteInView(t *testing.T, su *suite) {
	s := su.fresh(t)
	seed(t, s, kv{"a", "1"})
	err := s.View(t.Context(), func(tx store.Tx) error {
		if err := tx.Put([]byte("a"), []byte("x")); err == nil {
			t.Errorf("Put(%q) in View = nil, want error", "a")
		}
		if err := tx.Put([]byte("new"), []byte("x")); err == nil {
			t.Errorf("Put(%q) in View = nil, want error", "new")
		}
		if err := tx.Delete([]byte("a")); err == nil {
			t.Errorf("Delete(%q) in View = nil, want error", "a")
		}
		return errSentinel
	})
	if !errors.Is(err, errSentinel) {
		t.Errorf("View() = %v, want %v", err, errSentinel)
	}
	wantContents(t, s, []kv{{"a", "1"}})
}
