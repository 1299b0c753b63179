package tenants

import (
	"crypto/subtle"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Invitation invites an e-mail address to become an ADMIN member of a
// tenant, as the API shows it (the root's Invitation): never its link
// token, of which only a keyed hash is stored.
type Invitation struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Email    string `json:"email"`
	// Status is PENDING, or EXPIRED from the instant ExpiresAt passes.
	Status     string     `json:"status"`
	ExpiresAt  time.Time  `json:"expires_at"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
}

// At returns the invitation as seen at now: EXPIRED once its time has
// passed, even before the sweeper stores that.
func (i Invitation) At(now time.Time) Invitation {
	if !now.Before(i.ExpiresAt) {
		i.Status = InvitationExpired
	}
	return i
}

// InvitationOf is the invitation as stored (see Invitation.At for how it
// is shown).
func InvitationOf(r *InvitationRecord) Invitation {
	return Invitation{ID: r.ID, TenantID: r.TenantID, Email: r.Email, Status: r.Status, ExpiresAt: r.ExpiresAt,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
}

// InvitationRecordOf is the record of the API's invitation inv, whose
// link token has the keyed hash tokenHash.
func InvitationRecordOf(inv *Invitation, tokenHash []byte) *InvitationRecord {
	return &InvitationRecord{ID: inv.ID, TenantID: inv.TenantID, Email: inv.Email, Status: inv.Status,
		ExpiresAt: inv.ExpiresAt, CreatedBy: inv.CreatedBy, CreatedAt: inv.CreatedAt,
		ModifiedBy: inv.ModifiedBy, ModifiedAt: inv.ModifiedAt, TokenHash: tokenHash}
}

// EmitInvitation emits typ (events.TenantInvitation*) about the
// invitation rec. Its view is the API's Invitation, which holds no link
// token (the link is only ever sent to the invitee).
func EmitInvitation(t *unit.Tx, typ string, by unit.Actor, rec *InvitationRecord) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "invitation", EntityType: unit.EntityTenantInvitation, EntityID: rec.ID, View: func() any {
		inv := InvitationOf(rec)
		return &inv
	}})
}

// SaveInvitation writes the new invitation rec, by by, with its link
// lookup and expiry entry; it emits tenant.invitation.created and logs
// the creation.
func SaveInvitation(t *unit.Tx, by unit.Actor, rec *InvitationRecord) error {
	if err := PutInvitation(t, rec); err != nil {
		return err
	}
	if err := EmitInvitation(t, events.TenantInvitationCreated, by, rec); err != nil {
		return err
	}
	return t.Log(by, rec.TenantID, unit.EntityTenantInvitation, rec.ID, unit.OpCreate, "Invitation created")
}

// ResendInvitation replaces the invitation old with resent, by by: the
// old link stops working, the new one works until resent's expiry. It
// emits tenant.invitation.resent and logs the resend.
func ResendInvitation(t *unit.Tx, by unit.Actor, old, resent *InvitationRecord) error {
	if err := DropLinks(t, old); err != nil {
		return err
	}
	if err := PutInvitation(t, resent); err != nil {
		return err
	}
	if err := EmitInvitation(t, events.TenantInvitationResent, by, resent); err != nil {
		return err
	}
	return t.Log(by, resent.TenantID, unit.EntityTenantInvitation, resent.ID, unit.OpUpdate, "Invitation resent")
}

// DeleteInvitation deletes the invitation id of tenant tid, by by, with
// its link: the link stops working. It emits tenant.invitation.deleted
// and logs the deletion. Returns NotFound for an unknown id.
func DeleteInvitation(t *unit.Tx, by unit.Actor, tid, id string) error {
	rec, err := MustInvitation(t, tid, id)
	if err != nil {
		return err
	}
	if err := DropLinks(t, rec); err != nil {
		return err
	}
	if err := t.Delete(barrier.Tenant(tid).Record(unit.EntityTenantInvitation, id)); err != nil {
		return err
	}
	if err := EmitInvitation(t, events.TenantInvitationDeleted, by, rec); err != nil {
		return err
	}
	return t.Log(by, tid, unit.EntityTenantInvitation, id, unit.OpDelete, "Invitation deleted")
}

// ErrLink answers every invitation link that cannot be used: never
// issued, replaced by a resend, deleted, or accepted already.
var ErrLink = unit.Errorf(unit.NotFound, "the invitation link is unknown or no longer valid")

// Accept makes user an ADMIN member, with id mid, of the tenant whose
// invitation link has the keyed hash mac, and removes the invitation, so
// the link works once. user was validated and has an id; an empty e-mail
// is the invited address. It logs the join and the acceptance, emits
// tenant.member.created and tenant.invitation.accepted, and records the
// tenant in the call's CallInfo.
//
// Returns ErrLink for an unknown, used or replaced link or a tenant being
// deleted, NotFound for an expired invitation (saying so), Conflict when
// the user is a member already or a member has the user's e-mail address
// (case aside).
func Accept(t *unit.Tx, mac []byte, user User, mid string) (*Member, error) {
	var ref access.KeyRef
	ok, err := t.GetRecord(barrier.InviteLookup(mac), &ref)
	if err != nil {
		return nil, err
	}
	if !ok || ref.Kind != unit.EntityTenantInvitation {
		return nil, ErrLink
	}
	if deleting, err := Deleting(t, ref.TenantID); err != nil || deleting {
		if err == nil {
			err = ErrLink
		}
		return nil, err
	}
	rec, err := MustInvitation(t, ref.TenantID, ref.ID)
	if err != nil {
		return nil, ErrLink
	}
	if subtle.ConstantTimeCompare(rec.TokenHash, mac) != 1 {
		return nil, ErrLink
	}
	unit.RecordTenant(t.Ctx, rec.TenantID)
	if rec.Expired(t.Now) {
		return nil, unit.Errorf(unit.NotFound, "the invitation has expired; ask the tenant to resend it")
	}
	if user.Email == "" {
		user.Email = rec.Email
	}
	// By id or by address, as an invitation is refused for an address a
	// member has (case aside).
	if m, err := MemberWith(t, rec.TenantID, user.ID, user.Email); err != nil || m != nil {
		if err == nil {
			err = unit.Errorf(unit.Conflict, "the user is a member of the tenant already, or a member has this e-mail address")
		}
		return nil, err
	}
	member := Member{ID: mid, TenantID: rec.TenantID, Role: RoleAdmin, User: user, CreatedAt: t.Now}
	if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntityTenantMember, mid), MemberRecordOf(&member)); err != nil {
		return nil, err
	}
	if err := DropLinks(t, rec); err != nil {
		return nil, err
	}
	if err := t.Delete(barrier.Tenant(rec.TenantID).Record(unit.EntityTenantInvitation, rec.ID)); err != nil {
		return nil, err
	}
	by := unit.Actor{ID: user.ID, Type: unit.ActorUser}
	if err := t.Log(by, rec.TenantID, unit.EntityTenantMember, mid, unit.OpCreate, "Member joined by invitation"); err != nil {
		return nil, err
	}
	if err := EmitMember(t, events.TenantMemberCreated, by, &member); err != nil {
		return nil, err
	}
	if err := EmitInvitation(t, events.TenantInvitationAccepted, by, rec); err != nil {
		return nil, err
	}
	return &member, t.Log(by, rec.TenantID, unit.EntityTenantInvitation, rec.ID, unit.OpDelete, "Invitation accepted")
}
