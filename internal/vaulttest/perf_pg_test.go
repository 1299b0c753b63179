package vaulttest_test

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkTokenizeDurablePG is BenchmarkTokenizeDurable on PostgreSQL (the
// server named by TOKENVAULT_TEST_POSTGRES_DSN, with whatever durability it
// is configured with: run it against a server with fsync on to measure
// durable commits). Concurrent tokenizations share transactions through
// store/postgres's group commit; none returns before its commit.
//
//	go test -run XXX -bench TokenizeDurablePG -benchmem .
func BenchmarkTokenizeDurablePG(b *testing.B) {
	benchTokenizeDurable(b, vaulttest.NewEnvOn(b, vaulttest.OpenPG(b)))
}
