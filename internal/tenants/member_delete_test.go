package tenants

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestDeleteMember: an unknown member is NotFound and the OWNER a
// Conflict, both leaving everything as it was; an ADMIN is removed, with
// the member's event and a line.
func TestDeleteMember(t *testing.T) {
	t.Parallel()
	const (
		tid   = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
		owner = "0190f5a2-9000-7000-8000-0000000000c1"
		admin = "0190f5a2-9000-7000-8000-0000000000c2"
	)
	ctx := context.Background()
	w := worktest.New(t)
	w.Tenant(t, tid)
	by := unit.Actor{ID: "0190f5a2-9000-7000-8000-0000000000c3", Type: unit.ActorApplication}
	err := w.Update(ctx, func(tx *unit.Tx) error {
		for _, m := range []*MemberRecord{
			{ID: owner, TenantID: tid, Role: RoleOwner, UserID: owner, Email: "o@example.com", CreatedAt: worktest.Start},
			{ID: admin, TenantID: tid, Role: RoleAdmin, UserID: admin, Email: "a@example.com", CreatedAt: worktest.Start},
		} {
			if err := tx.PutRecord(barrier.Tenant(tid).Record(unit.EntityTenantMember, m.ID), m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	del := func(id string) error {
		return w.Update(ctx, func(tx *unit.Tx) error { return DeleteMember(tx, by, tid, id) })
	}
	if err := del(by.ID); unit.ErrorKind(err) != unit.NotFound {
		t.Errorf("DeleteMember(unknown) = %v, want NotFound", err)
	}
	if err := del(owner); unit.ErrorKind(err) != unit.Conflict {
		t.Errorf("DeleteMember(owner) = %v, want Conflict", err)
	}
	if ev, l := w.Events(), w.Lines(); len(ev)+len(l) != 0 {
		t.Errorf("refused deletions emitted %+v and wrote %+v", ev, l)
	}
	if err := del(admin); err != nil {
		t.Fatal(err)
	}
	err = w.View(ctx, func(tx *unit.Tx) error {
		left, err := Members(tx, tid)
		if err != nil {
			return err
		}
		if len(left) != 1 || left[0].ID != owner {
			t.Errorf("members left: %+v, want the owner alone", left)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := w.Events()
	want := &Member{ID: admin, TenantID: tid, Role: RoleAdmin, User: User{ID: admin, Email: "a@example.com"}, CreatedAt: worktest.Start}
	if len(ev) != 1 || ev[0].Type != events.TenantMemberDeleted || !cmp.Equal(ev[0].View(), want) {
		t.Errorf("events of the deletion: %+v, want %s of %+v", ev, events.TenantMemberDeleted, want)
	}
	if l := w.Lines(); len(l) != 1 || l[0].EntityID != admin || l[0].Operation != unit.OpDelete || l[0].Message != "Member removed" {
		t.Errorf("lines of the deletion: %+v", l)
	}
}
