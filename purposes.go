package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Purpose is one of a tenant's purposes of access: a name callers give
// (WithPurpose, the SVC-PURPOSE header) and access rules name
// (AccessRule.Purposes), with a description of what it is for. See
// docs/purpose.md.
type Purpose = tenants.Purpose

// MaxPurposes bounds a tenant's list of purposes, and an access rule's.
const MaxPurposes = access.MaxPurposes

// WithPurpose returns a context whose Vault calls name purpose as their
// purpose of access: an entry of the caller's tenant's list (Tenant.Purposes);
// empty names none. A call naming a purpose the list does not hold is
// Invalid (field "purpose"), whatever it does. Access rules with purposes
// apply only to calls naming one of theirs, and a read of one token that
// only such a rule would allow is Invalid (field "purpose") without one.
// The purpose is written into the audit line of every access to a
// token's data the call makes (TokenAccess.Purpose), including those of
// the sessions, proxies and reactors it runs.
func WithPurpose(ctx context.Context, purpose string) context.Context {
	return unit.WithPurpose(ctx, purpose)
}

// PurposeFrom returns the purpose of access ctx names (WithPurpose), or "".
func PurposeFrom(ctx context.Context) string { return unit.PurposeOf(ctx) }

// SetPurposesRequest is the body of PUT /tenants/self/purposes.
type SetPurposesRequest struct {
	// Purposes replace the tenant's list, in this order; empty leaves it
	// with none.
	Purposes []Purpose `json:"purposes"`
}

// SetPurposes replaces the caller's tenant's list of purposes of access
// and returns the tenant, with an audit line and the event
// tenant.purposes.updated. Requires tenant:update. Access rules naming a
// purpose taken off the list stay, and apply to no call (a call naming
// it is Invalid), so taking one off withholds, never grants.
//
// Returns Invalid for a list that is too long, a name that is not a
// purpose's name or is given twice, or a description missing, too long or
// holding a control character (fields purposes[i].name,
// purposes[i].description); Unauthenticated for a key that is missing,
// unknown or expired; RateLimited over a rate limit; PermissionDenied
// without tenant:update; StorageFull or Internal.
func (v *Vault) SetPurposes(ctx context.Context, key Credential, req SetPurposesRequest) (*Tenant, error) {
	fe := unit.FieldErrors{}
	tenants.ValidatePurposes(req.Purposes, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out Tenant
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		rec, err := tenants.SetPurposes(t.Tx, p.Actor(), p.TenantID, req.Purposes)
		if err != nil {
			return err
		}
		out = tenantOf(rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
