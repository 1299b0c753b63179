package tenants

import (
	"testing"
	"time"

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

// TestRecords: each record of the package round-trips, refuses every
// truncation of its bytes, and those kept under a tenant refuse a key
// not their own; an invitation says when it has expired.
func TestRecords(t *testing.T) {
	tk := barrier.Tenant(testTenant)
	mod := testTime.Add(time.Minute)
	tenant := &Record{ID: testTenant, Name: "t", OwnerID: testID, CreatedBy: testID, CreatedAt: testTime, ModifiedBy: testID, ModifiedAt: &mod}
	recordtest.Check(t, "tenant", tk.Record(unit.EntityTenant, testTenant), tenant)
	member := &MemberRecord{ID: testID, TenantID: testTenant, Role: "owner", UserID: otherID, Email: "a@example.com", CreatedAt: testTime}
	recordtest.Check(t, "member", tk.Record(unit.EntityTenantMember, testID), member)
	inv := &InvitationRecord{ID: testID, TenantID: testTenant, Email: "a@example.com", Status: "pending",
		ExpiresAt: testTime.Add(time.Hour), CreatedAt: testTime, TokenHash: []byte{1}}
	recordtest.Check(t, "invitation", tk.Record(unit.EntityTenantInvitation, testID), inv)
	recordtest.Check(t, "deletion marker", tk.Deleting(), &DeletionState{Phase: "records", Prefix: "p", After: "a"})
	for name, r := range map[string]unit.Record{"tenant": tenant, "member": member, "invitation": inv} {
		if _, err := r.AppendRecord(nil, barrier.Tenant(otherID).Record(unit.EntityTenantMember, otherID)); err == nil {
			t.Errorf("%s encoded at another record's key: want an error", name)
		}
	}
	if inv.Expired(inv.ExpiresAt.Add(-time.Nanosecond)) || !inv.Expired(inv.ExpiresAt) {
		t.Errorf("Expired around %v: want false before, true at", inv.ExpiresAt)
	}
}
