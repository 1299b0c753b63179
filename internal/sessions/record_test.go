package sessions

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/recordtest"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// TestRecord: a session round-trips with its grants' nil and empty lists
// kept apart, refuses every truncation of its bytes and a key not its
// own, and says when it has expired.
func TestRecord(t *testing.T) {
	key := barrier.Tenant(testTenant).Record(unit.EntitySession, testID)
	at := testTime.Add(time.Minute)
	rec := &Record{ID: testID, TenantID: testTenant, ApplicationID: otherID, KeyHash: []byte{1}, NonceHash: []byte{2},
		CreatedAt: testTime, ExpiresAt: testTime.Add(time.Hour), PendingAddress: "addr", Authorized: true,
		AuthorizedBy: otherID, AuthorizedAt: &at,
		Grants:  access.Grants{Permissions: []string{}, Rules: nil},
		Ceiling: access.Grants{Permissions: nil, Rules: []access.Rule{{Priority: 1, Transform: "mask", Permissions: []string{"token:read"}}}}}
	recordtest.Check(t, "session", key, rec)
	var got Record
	b, _ := rec.AppendRecord(nil, key)
	if err := got.DecodeRecord(key, b); err != nil || got.Grants.Permissions == nil || got.Grants.Rules != nil || got.Ceiling.Permissions != nil {
		t.Errorf("grants' nil and empty lists mixed up: %#v, %#v (%v)", got.Grants, got.Ceiling, err)
	}
	if _, err := rec.AppendRecord(nil, barrier.Tenant(testTenant).Record(unit.EntitySession, otherID)); err == nil {
		t.Errorf("session %s encoded at another id's key: want an error", testID)
	}
	if rec.Expired(rec.ExpiresAt.Add(-time.Nanosecond)) || !rec.Expired(rec.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", rec.ExpiresAt)
	}
	if keys := rec.PendingKeys(); len(keys) == 0 {
		t.Errorf("PendingKeys() = none, want the caps' entries")
	}
}
