package storetest

import (
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// Get reads key from s in its own View, failing t on an error.
func Get(t testing.TB, s store.Store, key string) []byte {
	t.Helper()
	var v []byte
	err := s.View(t.Context(), func(tx store.Tx) error {
		var err error
		v, err = tx.Get([]byte(key))
		return err
	})
	if err != nil {
		t.Fatalf("View(Get(%q)) = %v", key, err)
	}
	return v
}

// Put writes key in its own Update, failing t on an error.
func Put(t testing.TB, s store.Store, key, value string) {
	t.Helper()
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.Put([]byte(key), []byte(value))
	})
	if err != nil {
		t.Fatalf("Update(Put(%q)) = %v", key, err)
	}
}
