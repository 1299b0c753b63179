package idempotency

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit/recordtest"
)

const testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// TestRecord: a claim and a kept response round-trip and refuse every
// truncation of their bytes; a record says when it has expired.
func TestRecord(t *testing.T) {
	key := barrier.Tenant(testTenant).Record("idempotency", "ab")
	claim := &Record{Version: 1, Fingerprint: []byte{1, 2}, CreatedAt: testTime, ExpiresAt: testTime.Add(time.Hour),
		Claim: "run", LeaseUntil: testTime.Add(time.Minute), Grants: []byte{3}}
	recordtest.Check(t, "claim", key, claim)
	kept := *claim
	kept.Claim, kept.LeaseUntil = "", time.Time{}
	kept.Response = &Response{Status: 201, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: []byte(`{}`)}
	recordtest.Check(t, "kept response", key, &kept)
	if claim.Expired(claim.ExpiresAt.Add(-time.Nanosecond)) || !claim.Expired(claim.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", claim.ExpiresAt)
	}
}
