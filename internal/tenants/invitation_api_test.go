package tenants

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestInvitationLinkWorksOnce: an invitation saved with its link's hash
// is accepted once by that link, making an ADMIN member with the invited
// address; then, as for a resent invitation's old link, a deleted one's
// and a link never issued, the link is ErrLink. An expired invitation is
// NotFound, saying so.
func TestInvitationLinkWorksOnce(t *testing.T) {
	t.Parallel()
	const (
		tid = "0190f5a2-8c1e-7b3a-9d4e-5f6a7b8c9d0e"
		uid = "0190f5a2-9000-7000-8000-0000000000d1"
		mid = "0190f5a2-9000-7000-8000-0000000000d2"
	)
	ctx := context.Background()
	w := worktest.New(t)
	w.Tenant(t, tid)
	by := unit.Actor{ID: "0190f5a2-9000-7000-8000-0000000000d3", Type: unit.ActorApplication}
	invite := func(id, token string, lifetime time.Duration) *InvitationRecord {
		t.Helper()
		rec := InvitationRecordOf(&Invitation{ID: id, TenantID: tid, Email: id + "@example.com", Status: InvitationPending,
			ExpiresAt: worktest.Start.Add(lifetime), CreatedBy: by.ID, CreatedAt: worktest.Start}, LinkHash(w.Sys, token))
		if err := w.Update(ctx, func(tx *unit.Tx) error { return SaveInvitation(tx, by, rec) }); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	accept := func(token string) (*Member, error) {
		var m *Member
		err := w.Update(ctx, func(tx *unit.Tx) error {
			var err error
			m, err = Accept(tx, LinkHash(w.Sys, token), User{ID: uid}, mid)
			return err
		})
		return m, err
	}
	rec := invite("0190f5a2-9000-7000-8000-0000000000e1", "inv_a", Lifetime)
	old := invite("0190f5a2-9000-7000-8000-0000000000e2", "inv_old", Lifetime)
	if err := w.Update(ctx, func(tx *unit.Tx) error {
		next := InvitationOf(old)
		next.ExpiresAt = ResentExpiry(old.ExpiresAt, tx.Now)
		return ResendInvitation(tx, by, old, InvitationRecordOf(&next, LinkHash(w.Sys, "inv_new")))
	}); err != nil {
		t.Fatal(err)
	}
	gone := invite("0190f5a2-9000-7000-8000-0000000000e3", "inv_gone", Lifetime)
	if err := w.Update(ctx, func(tx *unit.Tx) error { return DeleteInvitation(tx, by, tid, gone.ID) }); err != nil {
		t.Fatal(err)
	}
	invite("0190f5a2-9000-7000-8000-0000000000e4", "inv_late", time.Minute)
	w.Events()
	w.Lines()

	m, err := accept("inv_a")
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != RoleAdmin || m.User.Email != rec.Email || m.TenantID != tid || m.ID != mid {
		t.Errorf("Accept() = %+v, want an ADMIN member with the invited address", m)
	}
	var types []string
	for _, e := range w.Events() {
		types = append(types, e.Type)
	}
	if len(types) != 2 || types[0] != events.TenantMemberCreated || types[1] != events.TenantInvitationAccepted {
		t.Errorf("events of Accept: %v", types)
	}
	for _, token := range []string{"inv_a", "inv_old", "inv_gone", "inv_never"} {
		if _, err := accept(token); err != ErrLink {
			t.Errorf("Accept(%s) = %v, want ErrLink", token, err)
		}
	}
	w.Advance(time.Minute)
	if _, err := accept("inv_late"); unit.ErrorKind(err) != unit.NotFound || err == ErrLink {
		t.Errorf("Accept(expired) = %v, want NotFound saying it expired", err)
	}
	err = w.View(ctx, func(tx *unit.Tx) error {
		left, err := Invitations(tx, tid)
		if err != nil {
			return err
		}
		if len(left) != 2 {
			t.Errorf("%d invitations left, want the resent one and the expired one", len(left))
		}
		if ok, err := tx.Has(barrier.InviteLookup(LinkHash(w.Sys, "inv_new"))); err != nil || !ok {
			t.Errorf("the resent invitation's new link is not stored (%v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInvitationAt: an invitation shows EXPIRED from the instant it
// expires.
func TestInvitationAt(t *testing.T) {
	t.Parallel()
	inv := Invitation{Status: InvitationPending, ExpiresAt: worktest.Start}
	if got := inv.At(worktest.Start.Add(-time.Nanosecond)).Status; got != InvitationPending {
		t.Errorf("At(before) = %s, want %s", got, InvitationPending)
	}
	if got := inv.At(worktest.Start).Status; got != InvitationExpired {
		t.Errorf("At(expiry) = %s, want %s", got, InvitationExpired)
	}
}
