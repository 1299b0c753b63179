package tenants

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestMemberWith: a member is found by user id or by e-mail address, case
// aside, and only in its own tenant.
func TestMemberWith(t *testing.T) {
	ctx := context.Background()
	w := worktest.New(t)
	seedTenant(t, w, "t1", 0)
	seedTenant(t, w, "t2", 0)
	if err := w.Update(ctx, func(tx *unit.Tx) error {
		return tx.PutRecord(barrier.Tenant("t1").Record(unit.EntityTenantMember, "m1"),
			&MemberRecord{ID: "m1", TenantID: "t1", Role: RoleOwner, UserID: "u1", Email: "Ada@Example.com", CreatedAt: tx.Now})
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tid, uid, email string
		want            string // the member's id, or ""
	}{
		{"t1", "u1", "", "m1"},
		{"t1", "", "ada@example.COM", "m1"},
		{"t1", "u2", "bob@example.com", ""},
		{"t1", "", "", ""},
		{"t2", "u1", "ada@example.com", ""},
	} {
		var got *MemberRecord
		if err := w.View(ctx, func(tx *unit.Tx) (err error) {
			got, err = MemberWith(tx, tc.tid, tc.uid, tc.email)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if id := ""; (got == nil) != (tc.want == "") || (got != nil && got.ID != tc.want) {
			if got != nil {
				id = got.ID
			}
			t.Errorf("MemberWith(%q, %q, %q) = %q, want %q", tc.tid, tc.uid, tc.email, id, tc.want)
		}
	}
}
