package vaulttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// PGDSN is the PostgreSQL server the tests may use (.ci/run starts one);
// empty means PostgreSQL tests are skipped.
var PGDSN = os.Getenv("TOKENVAULT_TEST_POSTGRES_DSN")

// PGSkip is the reason a PostgreSQL test gives when it skips.
const PGSkip = "set TOKENVAULT_TEST_POSTGRES_DSN=postgres://... to run the PostgreSQL store tests; .ci/run does this"

// FreshPGSchema names a new schema, dropped when the test ends (after the
// stores using it are closed, as cleanups run last-in first-out).
func FreshPGSchema(t testing.TB) string {
	t.Helper()
	if PGDSN == "" {
		t.Skip(PGSkip)
	}
	b := make([]byte, 8)
	rand.Read(b)
	schema := "tvtest_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, PGDSN)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// OpenPG opens a migrated PostgreSQL store on a fresh schema.
func OpenPG(t testing.TB) store.Store {
	t.Helper()
	schema := FreshPGSchema(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, PGDSN, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func init() {
	if PGDSN != "" {
		StoreKinds = append(StoreKinds, StoreKind{"postgres", OpenPG})
	}
}
