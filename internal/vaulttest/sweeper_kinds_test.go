package vaulttest_test

import (
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestExpiryKindsAreCounted holds the sweeper's gathered handlers to the
// metrics: every kind of schedule entry a feature writes has a handler,
// each counted under a SweepKind that Metrics knows.
func TestExpiryKindsAreCounted(t *testing.T) {
	e := vaulttest.NewEnv(t)
	kinds := vaulttest.ExpiryKinds(e.V)
	for _, kind := range []string{tokenvault.EntityApplication, tokens.Kind, tokenvault.EntitySession, idempotency.Kind,
		tokenvault.EntityTenantInvitation, tokenvault.EntityTokenIntent, tokenvault.EntityApproval} {
		k, ok := kinds[kind]
		if !ok {
			t.Errorf("expiryKinds[%q] missing", kind)
			continue
		}
		if k.Kind != kind || k.Expire == nil {
			t.Errorf("expiryKinds[%q] = {Kind: %q, Expire: %v}, want its own kind and a handler", kind, k.Kind, k.Expire != nil)
		}
		if !slices.Contains(tokenvault.SweepKinds(), tokenvault.SweepKind(k.Swept)) {
			t.Errorf("expiryKinds[%q].Swept = %q, not a SweepKind", kind, k.Swept)
		}
	}
	if len(kinds) != 7 {
		t.Errorf("len(expiryKinds) = %d, want 7", len(kinds))
	}
}
