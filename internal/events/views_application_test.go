package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
)

// TestApplicationViewHoldsNoKey: an application's view never carries its
// key hash; application.key.* views carry a fingerprint of it, the same
// for the same key and different for another.
func TestApplicationViewHoldsNoKey(t *testing.T) {
	t.Parallel()
	rec := &access.ApplicationRecord{ID: "a1", TenantID: "t1", Name: "app", Type: access.Private,
		Permissions: []string{"token:create"}, CreatedAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), KeyHash: []byte("keyed hash")}
	b, err := json.Marshal(ApplicationView(rec))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "key") {
		t.Errorf("the view names a key: %s", b)
	}
	a1, a2 := applicationKeyView(rec, rec.KeyHash), applicationKeyView(rec, rec.KeyHash)
	other := applicationKeyView(rec, []byte("another keyed hash"))
	if len(a1.KeyFingerprint) != 16 || a1.KeyFingerprint != a2.KeyFingerprint || a1.KeyFingerprint == other.KeyFingerprint {
		t.Errorf("fingerprints %q, %q, another key's %q", a1.KeyFingerprint, a2.KeyFingerprint, other.KeyFingerprint)
	}
	if strings.Contains(a1.KeyFingerprint, "keyed hash") || applicationKeyView(rec, nil).KeyFingerprint != "" {
		t.Error("a fingerprint shows the hash, or a missing key has one")
	}
}

// TestApplicationViewKeptSmall: an application whose rules would take
// its view past MaxViewBytes loses them, named in "omitted"; a small
// one omits nothing.
func TestApplicationViewKeptSmall(t *testing.T) {
	t.Parallel()
	rec := &access.ApplicationRecord{ID: "a1", TenantID: "t1", Name: "app", Type: access.Private}
	for i := range 200 {
		rec.Rules = append(rec.Rules, access.Rule{Priority: i, Container: "/" + strings.Repeat("c", 300), Transform: "redact",
			Permissions: []string{"token:read"}})
	}
	big := ApplicationView(rec)
	b, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxViewBytes || big.Rules != nil || strings.Join(big.Omitted, ",") != "rules" {
		t.Errorf("a big application's view: %d bytes, %d rules, omitted %v", len(b), len(big.Rules), big.Omitted)
	}
	rec.Rules = rec.Rules[:1]
	if small := ApplicationView(rec); small.Omitted != nil || len(small.Rules) != 1 {
		t.Errorf("a small application's view: omitted %v, %d rules", small.Omitted, len(small.Rules))
	}
}
