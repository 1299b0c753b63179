package tokenvault

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestExpiryKindsAreCounted holds the sweeper's gathered handlers to the
// metrics: every kind of schedule entry a feature writes has a handler,
// each counted under a SweepKind that Metrics knows.
func TestExpiryKindsAreCounted(t *testing.T) {
	v, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "v.db"),
		Keys: KeyOptions{MasterKey: make([]byte, 32)}, Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	for _, kind := range []string{EntityApplication, kindToken, EntitySession, kindIdempotency, EntityTenantInvitation, EntityTokenIntent} {
		k, ok := v.expiryKinds[kind]
		if !ok {
			t.Errorf("expiryKinds[%q] missing", kind)
			continue
		}
		if k.Kind != kind || k.Expire == nil {
			t.Errorf("expiryKinds[%q] = {Kind: %q, Expire: %v}, want its own kind and a handler", kind, k.Kind, k.Expire != nil)
		}
		if !slices.Contains(SweepKinds(), SweepKind(k.Swept)) {
			t.Errorf("expiryKinds[%q].Swept = %q, not a SweepKind", kind, k.Swept)
		}
	}
	if len(v.expiryKinds) != 6 {
		t.Errorf("len(expiryKinds) = %d, want 6", len(v.expiryKinds))
	}
}
