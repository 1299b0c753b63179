package vaulttest

import (
	"context"
	"testing"
)

// SettleChain links every queued audit line of e's Vault now, so that a
// test counting a call's store reads or writes does not count the linker's.
// It links through VerifyAuditChain, which links every tenant's queued
// lines before it verifies the bootstrap tenant's chain.
func (e *Env) SettleChain(t testing.TB) {
	t.Helper()
	if _, err := e.V.VerifyAuditChain(context.Background(), e.Boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
}

// WantOps fails unless got (log line operations, in order) is want.
func WantOps(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines %v, want %v", what, len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}
