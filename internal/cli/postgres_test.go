package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Two servers on one PostgreSQL schema act as one service: the first
// bootstraps, the second serves the first's key.
func TestTwoServersShareOnePostgres(t *testing.T) {
	dsn := os.Getenv("TOKENVAULT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("set TOKENVAULT_TEST_POSTGRES_DSN=postgres://... to run the PostgreSQL store tests; .ci/run does this")
	}
	b := make([]byte, 8)
	rand.Read(b)
	schema := "tvserver_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(context.Background())
		}
	})
	env := map[string]string{
		"TOKENVAULT_STORE": "postgres", "TOKENVAULT_DSN": dsn, "TOKENVAULT_PG_SCHEMA": schema,
		"TOKENVAULT_MASTER_KEY": strings.Repeat("5a", 32),
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	addrA, _, stopA := start(t, dirA, env)
	defer stopA()
	keyBytes, err := os.ReadFile(filepath.Join(dirA, "management.key"))
	if err != nil {
		t.Fatalf("first server did not bootstrap: %v", err)
	}
	key := strings.TrimSpace(string(keyBytes))
	addrB, outB, stopB := start(t, dirB, env)
	defer stopB()
	if strings.Contains(outB.String(), "Created tenant") {
		t.Error("the second server bootstrapped another tenant")
	}
	for _, addr := range []string{addrA, addrB} {
		if code, body := get(t, "http://"+addr+"/applications", key); code != 200 || !strings.Contains(body, "Management") {
			t.Errorf("GET /applications on %s = %d %s", addr, code, body)
		}
	}
}
