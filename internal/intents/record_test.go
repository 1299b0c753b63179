package intents

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit/recordtest"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

var testTime = time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)

// TestRecord: an intent round-trips with and without the address it was
// created from, refuses every truncation of its bytes and a key not its
// own, has caps' index entries only with an address, and says when it
// has expired.
func TestRecord(t *testing.T) {
	key := barrier.Tenant(testTenant).TokenIntent(testID)
	rec := &Record{ID: testID, TenantID: testTenant, Type: "card", Data: []byte(`{"number":"4242"}`), Fingerprint: "ab",
		CreatedBy: otherID, CreatedByType: "application", CreatedAt: testTime, ExpiresAt: testTime.Add(time.Hour), CreatedFrom: "mac"}
	recordtest.Check(t, "intent", key, rec)
	if len(rec.IndexKeys()) != 2 {
		t.Errorf("IndexKeys() = %v, want 2 entries", rec.IndexKeys())
	}
	old := *rec
	old.CreatedFrom = ""
	recordtest.Check(t, "intent without address", key, &old)
	if old.IndexKeys() != nil {
		t.Errorf("IndexKeys() without address = %v, want none", old.IndexKeys())
	}
	if _, err := rec.AppendRecord(nil, barrier.Tenant(testTenant).TokenIntent(otherID)); err == nil {
		t.Errorf("intent %s encoded at another id's key: want an error", testID)
	}
	if rec.Expired(rec.ExpiresAt.Add(-time.Nanosecond)) || !rec.Expired(rec.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", rec.ExpiresAt)
	}
}
