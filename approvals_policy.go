package tokenvault

import (
	"context"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The approval policy: reading and setting it (the latter held to the
// policy itself once it exists), and what it asks of the tenant's
// applications (approvers that exist and do not expire).

func policyOf(r *approvals.Policy) *ApprovalPolicy {
	if r == nil {
		return &ApprovalPolicy{Approvers: []string{}, Operations: []string{}}
	}
	out := &ApprovalPolicy{Required: r.Required, Approvers: r.Approvers, Operations: r.Operations,
		TTLSeconds: int(r.TTL / time.Second), DetokenizeOver: r.DetokenizeOver, ModifiedBy: r.ModifiedBy}
	if !r.ModifiedAt.IsZero() {
		at := r.ModifiedAt
		out.ModifiedAt = &at
	}
	return out
}

// GetApprovalPolicy returns the caller's tenant's approval policy (the
// zero policy when it has none). Requires tenant:read.
//
// Returns Unauthenticated, PermissionDenied, RateLimited, Internal.
func (v *Vault) GetApprovalPolicy(ctx context.Context, key Credential) (*ApprovalPolicy, error) {
	var out *ApprovalPolicy
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantRead)
		if err != nil {
			return err
		}
		pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
		out = policyOf(pol)
		return err
	})
	return out, err
}

// SetApprovalPolicy sets (or, with the zero policy, removes) the caller's
// tenant's approval policy. Requires tenant:update. Each approver must be
// a management application of the tenant without an expiry. Once the tenant has a policy,
// changing it needs that policy's approval: the call returns
// *ApprovalRequired.
//
// Returns Invalid (with fields), Unauthenticated, PermissionDenied,
// *ApprovalRequired, RateLimited, Internal.
func (v *Vault) SetApprovalPolicy(ctx context.Context, key Credential, req ApprovalPolicy) (*ApprovalPolicy, error) {
	rec := &approvals.Policy{Required: req.Required, Approvers: req.Approvers, Operations: req.Operations,
		TTL: time.Duration(req.TTLSeconds) * time.Second, DetokenizeOver: req.DetokenizeOver}
	if rec.Approvers == nil {
		rec.Approvers = []string{}
	}
	if rec.Operations == nil {
		rec.Operations = []string{}
	}
	if rec.TTL == 0 && rec.Required > 0 {
		rec.TTL = approvals.DefaultTTL
	}
	fe := unit.FieldErrors{}
	approvals.ValidatePolicy(rec, fe)
	var out *ApprovalPolicy
	var pending *ApprovalRequired
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		rec.TenantID = p.TenantID
		if err := checkApprovers(t, rec, fe); err != nil {
			return err
		}
		cur, err := approvals.GetPolicy(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		if cur.Needs(approvals.OpUpdatePolicy) {
			pending, err = v.requestChange(t, p, cur, &approvals.Change{Operation: approvals.OpUpdatePolicy, Target: p.TenantID},
				policyOf(cur), policyOf(rec), policyPayload(req, rec))
			return err
		}
		if err := approvals.PutPolicy(t.Tx, p.Actor(), rec); err != nil {
			return err
		}
		if rec.Required == 0 {
			out = policyOf(nil)
		} else {
			out = policyOf(rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, pending
	}
	return out, nil
}

// checkApprovers adds to fe an approver that is not a management
// application of rec's tenant, and returns fe's error.
func checkApprovers(t *txn, rec *approvals.Policy, fe unit.FieldErrors) error {
	for _, id := range rec.Approvers {
		app, err := access.LoadApplication(t.Tx, rec.TenantID, id)
		if err != nil {
			return err
		}
		switch {
		case app == nil || app.Type != access.Management:
			fe.Add("approvers", "%q is not a management application of the tenant", id)
		case app.ExpiresAt != nil:
			fe.Add("approvers", "%q expires: an approver must not", id)
		}
	}
	return fe.Err()
}

// keepsApprovers refuses (Conflict) the deletion of application id when
// it is one of its tenant's approvers and the approvers left would be
// fewer than the policy requires: no change held to it, the policy's own
// included, could be approved any more.
func keepsApprovers(t *txn, tid, id string) error {
	pol, err := approvals.GetPolicy(t.Tx, tid)
	if err != nil || pol == nil || !slices.Contains(pol.Approvers, id) {
		return err
	}
	left := 0
	for _, a := range pol.Approvers {
		if a == id {
			continue
		}
		app, err := access.LoadApplication(t.Tx, tid, a)
		if err != nil {
			return err
		}
		if app != nil {
			left++
		}
	}
	if left < pol.Required {
		return &Error{Kind: Conflict, Message: "the application is an approver, and without it the approval policy's approvals could not be given: change the policy first"}
	}
	return nil
}
