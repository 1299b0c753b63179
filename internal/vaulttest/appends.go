package vaulttest

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// CountingAppender is a bbolt store that counts its Appends.
type CountingAppender struct {
	*bolt.Store
	Appends atomic.Int64
}

func (c *CountingAppender) Append(ctx context.Context, entries []store.Entry) error {
	c.Appends.Add(1)
	return c.Store.Append(ctx, entries)
}

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
