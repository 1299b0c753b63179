package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/tenants"
)

// A tenant can delete itself (DELETE /tenants/self) with a management key
// holding tenant:delete. It is the tenant's most dangerous operation, so a
// tenant's approval policy can hold it (ApprovalDeleteTenant): the call
// then stores a pending change and returns *ApprovalRequired; once m
// approvers have approved it, its requester makes the call again, once,
// with the change's id (DeleteOwnTenantApproved). The approval applies
// nothing by itself because a deletion is many transactions and removes
// the change with the rest of the tenant; the check of the approval and
// the first transaction of the deletion are one transaction, so a key
// that loses tenant:delete, or an approval that expires, in between
// deletes nothing.

// DeleteOwnTenant deletes the caller's tenant with all of its data, as
// DeleteTenant does, unless the tenant's approval policy holds
// ApprovalDeleteTenant: then nothing is deleted and it returns an
// *ApprovalRequired carrying the pending change. From its first
// transaction on every key of the tenant, the caller's included, is
// refused; the tenant's audit chain ends in a signed final checkpoint.
//
// Returns Unauthenticated, PermissionDenied (no tenant:delete),
// RateLimited, StorageFull, Internal, and *ApprovalRequired.
func (v *Vault) DeleteOwnTenant(ctx context.Context, key Credential) error {
	return v.deleteOwnTenant(ctx, key, "")
}

// DeleteOwnTenantApproved is DeleteOwnTenant held to approval, with
// approvalID the id of its applied change: the same key, before the
// change's expiry.
//
// Returns Unauthenticated, PermissionDenied (no tenant:delete, another
// key's change), RateLimited, StorageFull, Internal as DeleteOwnTenant
// does, and Invalid (no approval id), NotFound (no such change), Conflict
// (not an applied tenant deletion, expired).
func (v *Vault) DeleteOwnTenantApproved(ctx context.Context, key Credential, approvalID string) error {
	if approvalID == "" {
		return &Error{Kind: Invalid, Message: "an approval id is required"}
	}
	return v.deleteOwnTenant(ctx, key, approvalID)
}

func (v *Vault) deleteOwnTenant(ctx context.Context, key Credential, approvalID string) error {
	// Lines written so far are linked first, so that the final
	// checkpoint covers them (DeleteTenant).
	if err := v.linkNow(ctx); err != nil {
		return err
	}
	var pending *ApprovalRequired
	var tid, by string
	err := v.update(ctx, func(t *txn) error {
		pending = nil
		p, err := t.authorize(key, PermTenantDelete)
		if err != nil {
			return err
		}
		tid, by = p.TenantID, p.ActorID
		if approvalID != "" {
			if _, err := approvals.Usable(t.Tx, p.Actor(), tid, approvalID, approvals.OpDeleteTenant, tid); err != nil {
				return err
			}
		} else {
			pol, err := approvals.GetPolicy(t.Tx, tid)
			if err != nil {
				return err
			}
			if pol.Needs(approvals.OpDeleteTenant) {
				rec, err := tenants.Get(t.Tx, tid)
				if err != nil {
					return err
				}
				pending, err = v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpDeleteTenant, Target: tid},
					tenantOf(rec), nil, changePayload{})
				return err
			}
		}
		return tenants.MarkDeleting(t.Tx, tid, func() error { return t.signFinalCheckpoint(tid) })
	})
	if pending != nil && err == nil {
		return pending
	}
	if tid != "" {
		v.barrier.ForgetKeys(tid)
	}
	if err != nil {
		return err
	}
	// The tenant's audit log goes with it: the host's log keeps who
	// deleted it.
	v.logger.Info("tokenvault: a tenant deleted itself", "tenant_id", tid, "application_id", by)
	return v.finishDeletion(ctx, tid)
}
