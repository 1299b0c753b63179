package tenants

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

// TestRecords: each record of the package round-trips, refuses every
// truncation of its bytes, and those kept under a tenant refuse a key
// not their own; an invitation says when it has expired.
func TestRecords(t *testing.T) {
	tk := barrier.Tenant(testTenant)
	mod := testTime.Add(time.Minute)
	tenant := &Record{ID: testTenant, Name: "t", OwnerID: testID, CreatedBy: testID, CreatedAt: testTime, ModifiedBy: testID, ModifiedAt: &mod}
	checkRecord(t, "tenant", tk.Record(unit.EntityTenant, testTenant), tenant)
	member := &MemberRecord{ID: testID, TenantID: testTenant, Role: "owner", UserID: otherID, Email: "a@example.com", CreatedAt: testTime}
	checkRecord(t, "member", tk.Record(unit.EntityTenantMember, testID), member)
	inv := &InvitationRecord{ID: testID, TenantID: testTenant, Email: "a@example.com", Status: "pending",
		ExpiresAt: testTime.Add(time.Hour), CreatedAt: testTime, TokenHash: []byte{1}}
	checkRecord(t, "invitation", tk.Record(unit.EntityTenantInvitation, testID), inv)
	checkRecord(t, "deletion marker", tk.Deleting(), &DeletionState{Phase: "records", Prefix: "p", After: "a"})
	for name, r := range map[string]unit.Record{"tenant": tenant, "member": member, "invitation": inv} {
		if _, err := r.AppendRecord(nil, barrier.Tenant(otherID).Record(unit.EntityTenantMember, otherID)); err == nil {
			t.Errorf("%s encoded at another record's key: want an error", name)
		}
	}
	if inv.Expired(inv.ExpiresAt.Add(-time.Nanosecond)) || !inv.Expired(inv.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", inv.ExpiresAt)
	}
}
