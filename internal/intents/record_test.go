package intents

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

const (
	testTenant = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
	testID     = "0190f5a2-9000-7000-8000-000000000001"
	otherID    = "0190f5a2-9000-7000-8000-000000000002"
)

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

// TestRecord: an intent round-trips with and without the address it was
// created from, refuses every truncation of its bytes and a key not its
// own, has caps' index entries only with an address, and says when it
// has expired.
func TestRecord(t *testing.T) {
	key := barrier.Tenant(testTenant).TokenIntent(testID)
	rec := &Record{ID: testID, TenantID: testTenant, Type: "card", Data: []byte(`{"number":"4242"}`), Fingerprint: "ab",
		CreatedBy: otherID, CreatedByType: "application", CreatedAt: testTime, ExpiresAt: testTime.Add(time.Hour), CreatedFrom: "mac"}
	checkRecord(t, "intent", key, rec)
	if len(rec.IndexKeys()) != 2 {
		t.Errorf("IndexKeys() = %v, want 2 entries", rec.IndexKeys())
	}
	old := *rec
	old.CreatedFrom = ""
	checkRecord(t, "intent without address", key, &old)
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
