package approvals

import (
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The operations a policy can hold to approval. OpUpdatePolicy is not
// among them: once a tenant has a policy, changing it always needs
// approval (Policy.Needs), or any one key could turn it off.
const (
	// OpCreateManagement: creating a management application (a new key
	// that manages the tenant).
	OpCreateManagement = "application.create_management"
	// OpWidenGrants: changing an application's permissions or rules so
	// that it may do more than before (Widens).
	OpWidenGrants = "application.widen_grants"
	// OpRegenerateKey: regenerating an application's key.
	OpRegenerateKey = "application.regenerate_key"
	// OpDetokenizeBulk: detokenizing more distinct tokens in one call
	// than the policy's DetokenizeOver. Its approval applies nothing: it
	// lets its requester make that one call, once (Use).
	OpDetokenizeBulk = "token.detokenize_bulk"
	// OpDeleteTenant: a tenant deleting itself (DELETE /tenants/self).
	// Like OpDetokenizeBulk, its approval applies nothing: a deletion is
	// many transactions and removes the change with the tenant, so the
	// approval lets its requester make the call, once (Usable).
	OpDeleteTenant = "tenant.delete"
	// OpExport: exporting tokens (token:export). Like OpDetokenizeBulk,
	// its approval applies nothing: it lets its requester run that one
	// export, once (Use).
	OpExport = "token.export"
	// OpUpdatePolicy: changing or removing the approval policy.
	OpUpdatePolicy = "approval_policy.update"
)

// Operations are the operations a policy can name, in the order the
// documentation gives them.
var Operations = []string{OpCreateManagement, OpWidenGrants, OpRegenerateKey, OpDetokenizeBulk, OpExport, OpDeleteTenant}

// UsedOnce reports whether op is approved to be called once by its
// requester (Use) rather than applied by its last approval.
func UsedOnce(op string) bool {
	return op == OpDetokenizeBulk || op == OpExport || op == OpDeleteTenant
}

// The limits of a policy.
const (
	MaxApprovers = 20
	MinTTL       = 5 * time.Minute
	MaxTTL       = 30 * 24 * time.Hour
	DefaultTTL   = 24 * time.Hour
)

// Needs reports whether op needs approval under p (nil: no policy, so
// nothing does). Changing the policy always does once it exists.
func (p *Policy) Needs(op string) bool {
	if p == nil || p.Required == 0 {
		return false
	}
	return op == OpUpdatePolicy || slices.Contains(p.Operations, op)
}

// IsApprover reports whether the actor by may approve under p.
func (p *Policy) IsApprover(by unit.Actor) bool {
	return p != nil && by.Type == unit.ActorApplication && slices.Contains(p.Approvers, by.ID)
}

// GetPolicy reads tenant tid's policy, nil when it has none.
func GetPolicy(t *unit.Tx, tid string) (*Policy, error) {
	var p Policy
	ok, err := t.GetRecord(PolicyKey(tid), &p)
	if err != nil || !ok {
		return nil, err
	}
	return &p, nil
}

// ValidatePolicy checks a policy's fields as a request gives them, into
// fe: m of n approvers (1 <= m <= n <= MaxApprovers, distinct), known
// operations, and a ttl within [MinTTL, MaxTTL]. A policy with no
// approvers and m = 0 removes the policy (Required 0).
func ValidatePolicy(p *Policy, fe unit.FieldErrors) {
	if p.Required == 0 && len(p.Approvers) == 0 && len(p.Operations) == 0 && p.DetokenizeOver == 0 {
		return
	}
	switch {
	case len(p.Approvers) == 0:
		fe.Add("approvers", "is required")
	case len(p.Approvers) > MaxApprovers:
		fe.Add("approvers", "must have at most %d items", MaxApprovers)
	}
	seen := map[string]bool{}
	for _, a := range p.Approvers {
		if seen[a] {
			fe.Add("approvers", "must not repeat %q", a)
		}
		seen[a] = true
	}
	if p.Required < 1 || p.Required > len(p.Approvers) {
		fe.Add("required", "must be between 1 and the number of approvers")
	}
	for _, op := range p.Operations {
		if !slices.Contains(Operations, op) {
			fe.Add("operations", "%q is not an operation that can need approval", op)
		}
	}
	switch held := slices.Contains(p.Operations, OpDetokenizeBulk); {
	case held && p.DetokenizeOver < 1:
		fe.Add("detokenize_over", "must be at least 1 when %s needs approval", OpDetokenizeBulk)
	case !held && p.DetokenizeOver != 0:
		fe.Add("detokenize_over", "is only for %s", OpDetokenizeBulk)
	}
	if p.TTL < MinTTL || p.TTL > MaxTTL {
		fe.Add("ttl_seconds", "must be between %d and %d", int(MinTTL/time.Second), int(MaxTTL/time.Second))
	}
}

// PutPolicy writes (or, when p.Required is 0, removes) tenant p.TenantID's
// policy, logging it as by's.
func PutPolicy(t *unit.Tx, by unit.Actor, p *Policy) error {
	if p.Required == 0 {
		if err := t.Delete(PolicyKey(p.TenantID)); err != nil {
			return err
		}
		return t.Log(by, p.TenantID, unit.EntityTenant, p.TenantID, unit.OpUpdate, "Approval policy removed")
	}
	p.ModifiedBy, p.ModifiedByType, p.ModifiedAt = by.ID, by.Type, t.Now
	if err := t.PutRecord(PolicyKey(p.TenantID), p); err != nil {
		return err
	}
	return t.Log(by, p.TenantID, unit.EntityTenant, p.TenantID, unit.OpUpdate,
		"Approval policy set: "+itoa(p.Required)+" of "+itoa(len(p.Approvers))+" approvers")
}

func itoa(n int) string {
	if n < 10 && n >= 0 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}
