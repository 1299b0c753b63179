package idempotency

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

const testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// checkRecord holds rec to its encoding: it encodes at key, decodes to
// the same record, and every shorter prefix of its bytes is refused with
// an error rather than a panic or a partial record.
func checkRecord[R interface {
	unit.Record
	*T
}, T any](t *testing.T, name string, key barrier.Key, rec R) {
	t.Helper()
	b, err := rec.AppendRecord(nil, key)
	if err != nil {
		t.Fatalf("%s: AppendRecord(%s) = %v", name, key, err)
	}
	got := R(new(T))
	if err := got.DecodeRecord(key, b); err != nil {
		t.Fatalf("%s: DecodeRecord(%x) = %v", name, b, err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("%s: round trip (-want +got)\n%s", name, diff)
	}
	for n := range len(b) {
		if err := R(new(T)).DecodeRecord(key, b[:n]); err == nil {
			t.Errorf("%s: DecodeRecord of the first %d of %d bytes = nil, want an error", name, n, len(b))
		}
	}
}

// TestRecord: a claim and a kept response round-trip and refuse every
// truncation of their bytes; a record says when it has expired.
func TestRecord(t *testing.T) {
	key := barrier.Tenant(testTenant).Record("idempotency", "ab")
	claim := &Record{Version: 1, Fingerprint: []byte{1, 2}, CreatedAt: testTime, ExpiresAt: testTime.Add(time.Hour),
		Claim: "run", LeaseUntil: testTime.Add(time.Minute), Grants: []byte{3}}
	checkRecord(t, "claim", key, claim)
	kept := *claim
	kept.Claim, kept.LeaseUntil = "", time.Time{}
	kept.Response = &Response{Status: 201, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: []byte(`{}`)}
	checkRecord(t, "kept response", key, &kept)
	if claim.Expired(claim.ExpiresAt.Add(-time.Nanosecond)) || !claim.Expired(claim.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", claim.ExpiresAt)
	}
}
