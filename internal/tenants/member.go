package tenants

import (
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Members returns every member of tenant tid, oldest first. Tenants have
// few members, so a scan is the index.
func Members(t *unit.Tx, tid string) ([]MemberRecord, error) {
	raws, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityTenantMember))
	if err != nil {
		return nil, err
	}
	out := make([]MemberRecord, 0, len(raws))
	for _, kv := range raws {
		var rec MemberRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// MemberWith returns the member of tenant tid that is user uid or has this
// e-mail address (compared case-insensitively; either may be empty), or
// nil. Invitations and their acceptance use it to refuse an address or a
// user that is a member already.
func MemberWith(t *unit.Tx, tid, uid, email string) (*MemberRecord, error) {
	members, err := Members(t, tid)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		if (uid != "" && m.UserID == uid) || (email != "" && strings.EqualFold(m.Email, email)) {
			return &members[i], nil
		}
	}
	return nil, nil
}

// Member is a user's membership of a tenant, as the API shows it (the
// root's TenantMember).
type Member struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	Role      string    `json:"role"`
	User      User      `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}

// MemberOf is the member the API shows of the record r.
func MemberOf(r *MemberRecord) Member {
	return Member{ID: r.ID, TenantID: r.TenantID, Role: r.Role,
		User:      User{ID: r.UserID, Email: r.Email, FirstName: r.FirstName, LastName: r.LastName, Picture: r.Picture},
		CreatedAt: r.CreatedAt}
}

// MemberRecordOf is the record of the API's member m.
func MemberRecordOf(m *Member) *MemberRecord {
	return &MemberRecord{ID: m.ID, TenantID: m.TenantID, Role: m.Role, UserID: m.User.ID, Email: m.User.Email,
		FirstName: m.User.FirstName, LastName: m.User.LastName, Picture: m.User.Picture, CreatedAt: m.CreatedAt}
}

// DeleteMember removes the member id of tenant tid, by by: from then on
// the user is not a member, which is all the access a member has. It
// emits tenant.member.deleted and logs the removal.
//
// Returns NotFound for an unknown id, Conflict for the OWNER, who cannot
// be removed.
func DeleteMember(t *unit.Tx, by unit.Actor, tid, id string) error {
	if !unit.ValidID(id) {
		return unit.NotFoundError("member")
	}
	var m MemberRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenantMember, id), &m)
	if err != nil {
		return err
	}
	if !ok {
		return unit.NotFoundError("member")
	}
	if m.Role == RoleOwner {
		return unit.Errorf(unit.Conflict, "the OWNER of a tenant cannot be removed")
	}
	if err := t.Delete(barrier.Tenant(tid).Record(unit.EntityTenantMember, id)); err != nil {
		return err
	}
	member := MemberOf(&m)
	if err := EmitMember(t, events.TenantMemberDeleted, by, &member); err != nil {
		return err
	}
	return t.Log(by, tid, unit.EntityTenantMember, id, unit.OpDelete, "Member removed")
}

// EmitMember emits typ (events.TenantMember*) about the member m. Its
// view is a copy of m, which holds nothing secret.
func EmitMember(t *unit.Tx, typ string, by unit.Actor, m *Member) error {
	return t.Emit(unit.Event{TenantID: m.TenantID, Type: typ, By: by, ObjectName: "member", EntityType: unit.EntityTenantMember, EntityID: m.ID, View: func() any {
		c := *m
		return &c
	}})
}
