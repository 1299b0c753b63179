package tokenvault

import (
	"context"
	"errors"
	"time"

	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Approvals for dangerous operations (docs/approvals.md). A tenant's
// approval policy names m of n approvers (management applications) and
// the operations that need their approval. Such an operation does not
// take effect when called: it is stored as a pending change and the call
// returns an *ApprovalRequired error carrying it. The change takes effect
// in the transaction of its m-th approval, re-checked against the state
// of then; its requester cannot approve it, an approver counts once, and
// an expired change cannot be approved.

// The operations an approval policy can hold to approval
// (ApprovalPolicy.Operations), and the change of the policy itself, which
// always needs approval once a policy exists.
const (
	ApprovalCreateManagement = approvals.OpCreateManagement
	ApprovalWidenGrants      = approvals.OpWidenGrants
	ApprovalRegenerateKey    = approvals.OpRegenerateKey
	ApprovalDetokenizeBulk   = approvals.OpDetokenizeBulk
	ApprovalDeleteTenant     = approvals.OpDeleteTenant
	ApprovalUpdatePolicy     = approvals.OpUpdatePolicy
)

// The statuses of a PendingChange.
const (
	ChangePending  = approvals.Pending
	ChangeApplied  = approvals.Applied
	ChangeRejected = approvals.Rejected
	ChangeExpired  = approvals.Expired
	ChangeFailed   = approvals.Failed
)

// The events of pending changes.
const (
	EventApprovalRequested = events.ApprovalRequested
	EventApprovalApproved  = events.ApprovalApproved
	EventApprovalApplied   = events.ApprovalApplied
	EventApprovalRejected  = events.ApprovalRejected
	EventApprovalExpired   = events.ApprovalExpired
	EventApprovalFailed    = events.ApprovalFailed
)

// EntityApproval is the audit log's entity of a pending change.
const EntityApproval = unit.EntityApproval

// PendingChange is a change waiting for approval, or decided: what it
// does as its before and after (JSON views; null for nothing), who
// requested it, its approvals and its expiry. It never holds a key.
type PendingChange = approvals.ChangeView

// ChangeApproval is one approval of a PendingChange.
type ChangeApproval = approvals.ApprovalView

// ApprovalPolicy is a tenant's approval policy. The zero policy (no
// approvers, required 0) is no policy.
type ApprovalPolicy struct {
	// Required is how many distinct approvers a change needs (m).
	Required int `json:"required"`
	// Approvers are the ids of the management applications that may
	// approve (n, at most 20).
	Approvers []string `json:"approvers"`
	// Operations are the operations that need approval (Approval*, but
	// ApprovalUpdatePolicy, which always does).
	Operations []string `json:"operations"`
	// TTLSeconds is how long a change waits for its approvals: 300 to
	// 2592000 seconds; 0 in a request means 86400 (a day).
	TTLSeconds int `json:"ttl_seconds"`
	// DetokenizeOver, with ApprovalDetokenizeBulk among the operations:
	// a detokenization of more distinct tokens than this in one call
	// needs approval (then DetokenizeApproved makes it, once).
	DetokenizeOver int        `json:"detokenize_over,omitempty"`
	ModifiedBy     string     `json:"modified_by,omitempty"`
	ModifiedAt     *time.Time `json:"modified_at,omitempty"`
}

// ApprovalRequired is the error of an operation that needs approval: it
// did not take effect, and waits as Change. Key, for the creation of an
// application or a regenerated key, is the key it will have once the
// change is applied (shown only here, to its requester).
//
//	var ar *tokenvault.ApprovalRequired
//	if errors.As(err, &ar) { fmt.Println("waiting for approval:", ar.Change.ID) }
type ApprovalRequired struct {
	Change *PendingChange
	Key    Credential
}

func (e *ApprovalRequired) Error() string {
	return "tokenvault: " + e.Change.Operation + " needs approval: pending change " + e.Change.ID
}

// ListApprovalsRequest filters and pages ListApprovals.
type ListApprovalsRequest struct {
	// Status, when set, keeps only the changes in it (pending, applied,
	// rejected, expired, failed).
	Status string
	PageRequest
}

// ListApprovals returns a page of the caller's tenant's pending and
// decided changes, oldest first, by cursor as the applications' list (a
// page examines at most its offset, its size and 1,000 more changes;
// TotalItems is a lower bound: changes are not counted). Requires
// tenant:read, or being one of the policy's approvers.
//
// Returns Invalid (an unknown status, a bad page), Unauthenticated,
// PermissionDenied, RateLimited, Internal.
func (v *Vault) ListApprovals(ctx context.Context, key Credential, req ListApprovalsRequest) (*Page[PendingChange], error) {
	switch req.Status {
	case "", ChangePending, ChangeApplied, ChangeRejected, ChangeExpired, ChangeFailed:
	default:
		return nil, unit.InvalidField("status", "must be pending, applied, rejected, expired or failed")
	}
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[PendingChange]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorizeApprovals(key)
		if err != nil {
			return err
		}
		cs, err := approvals.List(t.Tx, p.TenantID, req.Status, pg)
		if err != nil {
			return err
		}
		out = &Page[PendingChange]{Pagination: cs.Pagination, Data: make([]PendingChange, len(cs.Data))}
		for i := range cs.Data {
			out.Data[i] = *approvals.ChangeOf(&cs.Data[i], approvals.StatusAt(&cs.Data[i], t.Tx))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetApproval returns one of the caller's tenant's changes. Requires
// tenant:read, or being one of the policy's approvers.
//
// Returns NotFound, Unauthenticated, PermissionDenied, RateLimited,
// Internal.
func (v *Vault) GetApproval(ctx context.Context, key Credential, id string) (*PendingChange, error) {
	var out *PendingChange
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorizeApprovals(key)
		if err != nil {
			return err
		}
		c, err := approvals.Get(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = approvals.ChangeOf(c, approvals.StatusAt(c, t.Tx))
		return nil
	})
	return out, err
}

// authorizeApprovals authenticates key, which must hold tenant:read or
// be one of its tenant's approvers.
func (t *txn) authorizeApprovals(key Credential) (*principal, error) {
	p, err := t.authenticate(key)
	if err != nil {
		return nil, err
	}
	if p.Has(PermTenantRead) {
		return p, nil
	}
	pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
	if err != nil {
		return nil, err
	}
	if !pol.IsApprover(p.Actor()) {
		return nil, unit.Forbidden(PermTenantRead)
	}
	return p, nil
}

// ErrChangeExpired is the Conflict of an approval of an expired change
// (which the call records as expired).
var ErrChangeExpired = &Error{Kind: Conflict, Message: "the change expired before it was approved"}

// ApproveChange approves one of the caller's tenant's pending changes. The
// caller must be one of the policy's approvers, not the change's
// requester, and counts once. With the last needed approval the change
// takes effect in the same transaction, re-checked against the current
// state: one that no longer applies is recorded as failed and returned
// with a Conflict saying why.
//
// Returns NotFound, Unauthenticated, PermissionDenied (not an approver;
// the requester), Conflict (approved by the caller already; decided
// already; ErrChangeExpired; no longer applies), RateLimited, Internal.
func (v *Vault) ApproveChange(ctx context.Context, key Credential, id string) (*PendingChange, error) {
	var out *PendingChange
	var by *principal
	var applyErr error
	err := v.update(ctx, func(t *txn) error {
		applyErr = nil
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		by = p
		pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		c, err := approvals.Approve(t.Tx, p.Actor(), pol, p.TenantID, id, func(c *approvals.Change) error {
			if err := v.applyChange(t, c); err != nil {
				applyErr = err
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		out = approvals.ChangeOf(c, c.Status)
		return nil
	})
	if applyErr != nil && errors.Is(err, applyErr) {
		return v.failChange(ctx, by, id, applyErr)
	}
	if err != nil {
		return nil, err
	}
	if out.Status == ChangeExpired {
		return out, ErrChangeExpired
	}
	return out, nil
}

// failChange records change id as failed after its last approval, by
// by, did not apply (why), and returns it with the Conflict saying why.
// An Internal or StorageFull error is no reason to fail a change: it is
// returned as it is and the change stays pending.
func (v *Vault) failChange(ctx context.Context, by *principal, id string, why error) (*PendingChange, error) {
	var e *Error
	if !errors.As(why, &e) || e.Kind == Internal || e.Kind == StorageFull {
		return nil, why
	}
	reason := e.Message
	if reason == "" {
		reason = e.Kind.String()
	}
	var out *PendingChange
	err := v.update(ctx, func(t *txn) error {
		c, err := approvals.Fail(t.Tx, by.Actor(), by.TenantID, id, "no longer applies: "+reason)
		if err != nil {
			return err
		}
		out = approvals.ChangeOf(c, c.Status)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, &Error{Kind: Conflict, Message: "the change no longer applies: " + reason, Fields: e.Fields}
}

// RejectChange rejects one of the caller's tenant's pending changes, by
// one of the policy's approvers, or withdraws it, by its requester;
// reason is optional (at most 1000 characters).
//
// Returns Invalid, NotFound, Unauthenticated, PermissionDenied, Conflict
// (decided already; ErrChangeExpired), RateLimited, Internal.
func (v *Vault) RejectChange(ctx context.Context, key Credential, id, reason string) (*PendingChange, error) {
	if len([]rune(reason)) > 1000 {
		return nil, unit.InvalidField("reason", "must be at most 1000 characters")
	}
	fe := unit.FieldErrors{}
	unit.CheckNoControl("reason", reason, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *PendingChange
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		c, err := approvals.Reject(t.Tx, p.Actor(), pol, p.TenantID, id, reason)
		if err != nil {
			return err
		}
		out = approvals.ChangeOf(c, c.Status)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out.Status == ChangeExpired {
		return out, ErrChangeExpired
	}
	return out, nil
}
