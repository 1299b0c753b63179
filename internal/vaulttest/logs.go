package vaulttest

import (
	"context"
	"testing"
)

// SettleChain links every queued audit line of e's Vault now, so that a
// test counting a call's store reads or writes does not count the linker's.
// It links as the Vault's own linker does (LinkNow), and verifies nothing:
// a test that walks a log of 20,000 lines settles before each page, and a
// verification of the whole chain each time made such a test quadratic
// (55 s of its 57). Tests of the chain call VerifyAuditChain themselves.
func (e *Env) SettleChain(t testing.TB) {
	t.Helper()
	if err := LinkNow(context.Background(), e.V); err != nil {
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
