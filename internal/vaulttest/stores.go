package vaulttest

import (
	"bytes"
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// SharedStore hides the SingleProcess marker, as a store shared between
// processes would, so every call authenticates from the store.
type SharedStore struct{ store.Store }

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

// CountingAppender is a bbolt store that counts its Appends.
type CountingAppender struct {
	*bolt.Store
	Appends atomic.Int64
}

// Append counts the call and appends through the bbolt store.
func (c *CountingAppender) Append(ctx context.Context, entries []store.Entry) error {
	c.Appends.Add(1)
	return c.Store.Append(ctx, entries)
}

// OpenCountingAppender opens a CountingAppender on a new bbolt file in the
// test's temporary directory, and returns it with the file's path.
func OpenCountingAppender(t *testing.T) (*CountingAppender, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &CountingAppender{Store: s}, path
}

// SecretToken creates an application that creates and reveals tokens,
// and a token holding "secret" with it.
func (e *Env) SecretToken(t *testing.T) (*tokenvault.Application, *tokenvault.Token) {
	t.Helper()
	reader := e.Reader(t, "reveal", "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return reader, tok
}
