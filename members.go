package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ListMembersRequest filters and pages ListMembers.
type ListMembersRequest struct {
	// UserIDs, when non-empty, keeps only the members that are these users.
	UserIDs []string
	PageRequest
}

// ListMembers returns the members of the caller's tenant, oldest first, at
// most MaxMemberPageSize a page. Requires tenant:member:read. List reads are
// not logged.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without tenant:member:read, or
// Internal.
func (v *Vault) ListMembers(ctx context.Context, key Credential, req ListMembersRequest) (*Page[TenantMember], error) {
	pg, err := req.PageRequest.Resolve(MaxMemberPageSize)
	if err != nil {
		return nil, err
	}
	if err := unit.CheckIDs("user_id", req.UserIDs); err != nil {
		return nil, err
	}
	var out *Page[TenantMember]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantMemberRead)
		if err != nil {
			return err
		}
		out, err = tenants.ListMembers(t.Tx, p.TenantID, pg, req.UserIDs)
		return err
	})
	return out, err
}

// DeleteMember removes a member from the caller's tenant: from then on
// Membership reports the user is not a member, which is all the access a
// member has. The OWNER cannot be removed (Conflict). Requires
// tenant:member:delete.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) DeleteMember(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantMemberDelete)
		if err != nil {
			return err
		}
		return tenants.DeleteMember(t.Tx, p.Actor(), p.TenantID, id)
	})
}

// Membership returns user uid's membership of tenant tid, or NotFound. It
// takes no key: it is how a host program that signs its users in decides
// whether one may act for a tenant, and so how removing a member revokes
// that member's access at once. Returns Internal when the store cannot be
// read.
func (v *Vault) Membership(ctx context.Context, tid, uid string) (*TenantMember, error) {
	var out *TenantMember
	err := v.view(ctx, func(t *txn) error {
		var err error
		out, err = tenants.Membership(t.Tx, tid, uid)
		return err
	})
	return out, err
}
