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
