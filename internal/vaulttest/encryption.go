package vaulttest

import (
	"bytes"
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// Dump returns every key and value in s.
func Dump(t *testing.T, s store.Store) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			out[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	return out
}
