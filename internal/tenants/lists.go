package tenants

import (
	"slices"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ListMembers returns one page of the members of tenant tid, oldest
// first, as paging.Records reads them (a page costs what it returns).
// userIDs, when non-empty, keeps only the members that are these users.
func ListMembers(t *unit.Tx, tid string, pg paging.Pager, userIDs []string) (*paging.Page[Member], error) {
	return paging.Records(t, tid, unit.EntityTenantMember, pg, len(userIDs) > 0, func(kv barrier.StoredValue) (*Member, error) {
		var rec MemberRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		m := MemberOf(&rec)
		if len(userIDs) > 0 && !slices.Contains(userIDs, m.User.ID) {
			return nil, nil
		}
		return &m, nil
	})
}

// ListInvitations returns one page of the invitations of tenant tid,
// oldest first, each with its status as of t's time (Invitation.At).
func ListInvitations(t *unit.Tx, tid string, pg paging.Pager) (*paging.Page[Invitation], error) {
	return paging.Records(t, tid, unit.EntityTenantInvitation, pg, false, func(kv barrier.StoredValue) (*Invitation, error) {
		var rec InvitationRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		inv := InvitationOf(&rec).At(t.Now)
		return &inv, nil
	})
}

// FindMember returns the member of tenant tid that is user uid or has
// this e-mail address (MemberWith), as the API shows it, or nil.
func FindMember(t *unit.Tx, tid, uid, email string) (*Member, error) {
	rec, err := MemberWith(t, tid, uid, email)
	if err != nil || rec == nil {
		return nil, err
	}
	m := MemberOf(rec)
	return &m, nil
}

// Membership returns user uid's membership of tenant tid, or NotFound
// ("member") when the tenant or the membership does not exist, or either
// id is not a UUID.
func Membership(t *unit.Tx, tid, uid string) (*Member, error) {
	if !unit.ValidID(tid) || !unit.ValidID(uid) {
		return nil, unit.NotFoundError("member")
	}
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), &Record{})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("member")
	}
	m, err := FindMember(t, tid, uid, "")
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, unit.NotFoundError("member")
	}
	return m, nil
}
