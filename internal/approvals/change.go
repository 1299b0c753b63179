package approvals

import (
	"fmt"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Request stores c, a new change of tenant c.TenantID requested by by,
// waiting for pol's approvals until pol's ttl from t.Now: its record,
// its audit line and approval.requested.
func Request(t *unit.Tx, by unit.Actor, pol *Policy, c *Change) error {
	c.Required = pol.Required
	c.RequestedBy, c.RequestedByType = by.ID, by.Type
	c.RequestedAt, c.ExpiresAt = t.Now, t.Now.Add(pol.TTL)
	c.Status = Pending
	// PutRecord, not PutNew: the change is read back (listed, approved)
	// at once, never an append folded later.
	if err := t.PutRecord(ChangeKey(c.TenantID, c.ID), c); err != nil {
		return err
	}
	if err := t.PutIndex(ExpiryKey(c)); err != nil {
		return err
	}
	if err := emit(t, Requested, by, c); err != nil {
		return err
	}
	return t.Log(by, c.TenantID, unit.EntityApproval, c.ID, unit.OpCreate, fmt.Sprintf("Approval of %s requested", c.Operation))
}

// Get reads change id of tenant tid; NotFound when there is none.
func Get(t *unit.Tx, tid, id string) (*Change, error) {
	var c Change
	ok, err := t.GetRecord(ChangeKey(tid, id), &c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("approval")
	}
	return &c, nil
}

// List is one page of tenant tid's changes, oldest first (paging.Records:
// a page costs what it examines); with status set, only those in it (a
// pending change past its expiry counts as expired). Its total is a lower
// bound: the changes are not counted.
func List(t *unit.Tx, tid, status string, pg paging.Pager) (*paging.Page[Change], error) {
	return paging.Records(t, tid, KindChange, pg, true, func(kv barrier.StoredValue) (*Change, error) {
		var c Change
		if err := t.OpenRecord(kv.Key, kv.Raw, &c); err != nil {
			return nil, err
		}
		if status != "" && StatusAt(&c, t) != status {
			return nil, nil
		}
		return &c, nil
	})
}

// StatusAt is c's status at t's time: a pending change past its expiry
// is expired, whether or not that was recorded yet.
func StatusAt(c *Change, t *unit.Tx) string {
	if c.ExpiredAt(t.Now) {
		return Expired
	}
	return c.Status
}

// Errors of a decision.
var (
	// ErrSelfApproval: the requester of a change cannot approve it.
	ErrSelfApproval = unit.Errorf(unit.PermissionDenied, "the requester of a change cannot approve it")
	// ErrNotApprover: only the policy's named approvers approve or reject.
	ErrNotApprover = unit.Errorf(unit.PermissionDenied, "only the approval policy's approvers may approve or reject a change")
	// ErrTwice: one approver counts once.
	ErrTwice = unit.Errorf(unit.Conflict, "this approver has approved the change already")
)

// errDecided is the Conflict of a decision on a change no longer pending.
func errDecided(c *Change) error {
	return unit.Errorf(unit.Conflict, "the change is %s, not pending", c.Status)
}

// Approve records by's approval of change id of tenant tid, by one of
// pol's approvers (not its requester, and once). When it is the change's
// last needed approval, apply carries the change out in t, against the
// state of now, and the change is applied; apply's error aborts t (the
// caller then records the failure: Fail). A pending change past its
// expiry is marked expired instead (its audit line and event written),
// and returned with that status for the caller to refuse after t
// commits.
//
// Returns NotFound, PermissionDenied (ErrNotApprover, ErrSelfApproval),
// Conflict (ErrTwice, a change decided already), or apply's error.
func Approve(t *unit.Tx, by unit.Actor, pol *Policy, tid, id string, apply func(*Change) error) (*Change, error) {
	c, err := Get(t, tid, id)
	if err != nil {
		return nil, err
	}
	if !pol.IsApprover(by) {
		return nil, ErrNotApprover
	}
	if c.Status != Pending {
		return nil, errDecided(c)
	}
	if by.ID == c.RequestedBy && by.Type == c.RequestedByType {
		return nil, ErrSelfApproval
	}
	if c.ExpiredAt(t.Now) {
		return c, decide(t, unit.SystemActor, c, Expired, "the change expired before it was approved", Expired)
	}
	for _, a := range c.Approvals {
		if a.By == by.ID && a.ByType == by.Type {
			return nil, ErrTwice
		}
	}
	c.Approvals = append(c.Approvals, Approval{By: by.ID, ByType: by.Type, At: t.Now})
	if err := t.Log(by, tid, unit.EntityApproval, id, unit.OpUpdate,
		fmt.Sprintf("Approval of %s approved (%d of %d)", c.Operation, len(c.Approvals), c.Required)); err != nil {
		return nil, err
	}
	if err := emit(t, Approved, by, c); err != nil {
		return nil, err
	}
	if len(c.Approvals) < c.Required {
		return c, t.PutRecord(ChangeKey(tid, id), c)
	}
	if err := apply(c); err != nil {
		return nil, err
	}
	return c, decide(t, by, c, Applied, "", Applied)
}

// Reject rejects change id of tenant tid, by one of pol's approvers or
// its requester (who withdraws it), with an optional reason.
//
// Returns NotFound, PermissionDenied (ErrNotApprover), Conflict (a change
// decided already).
func Reject(t *unit.Tx, by unit.Actor, pol *Policy, tid, id, reason string) (*Change, error) {
	c, err := Get(t, tid, id)
	if err != nil {
		return nil, err
	}
	requester := by.ID == c.RequestedBy && by.Type == c.RequestedByType
	if !pol.IsApprover(by) && !requester {
		return nil, ErrNotApprover
	}
	if c.Status != Pending {
		return nil, errDecided(c)
	}
	if c.ExpiredAt(t.Now) {
		return c, decide(t, unit.SystemActor, c, Expired, "the change expired before it was decided", Expired)
	}
	return c, decide(t, by, c, Rejected, reason, Rejected)
}

// Fail marks change id of tenant tid failed, with why, after an
// approval by by whose application failed (Approve's apply): by's
// approval is recorded with it. Nothing is done to a change no longer
// pending, or already approved by by (another call got there first).
func Fail(t *unit.Tx, by unit.Actor, tid, id, why string) (*Change, error) {
	c, err := Get(t, tid, id)
	if err != nil {
		return nil, err
	}
	if c.Status != Pending {
		return c, nil
	}
	for _, a := range c.Approvals {
		if a.By == by.ID && a.ByType == by.Type {
			return c, nil
		}
	}
	c.Approvals = append(c.Approvals, Approval{By: by.ID, ByType: by.Type, At: t.Now})
	return c, decide(t, by, c, Failed, why, Failed)
}

// decide ends c with status (and reason), by by: its payload (which may
// hold a new key) is cleared, its audit line and event written.
func decide(t *unit.Tx, by unit.Actor, c *Change, status, reason, event string) error {
	c.Status, c.Reason = status, reason
	c.DecidedBy, c.DecidedByType, c.DecidedAt = by.ID, by.Type, t.Now
	clear(c.Payload)
	c.Payload = nil
	if err := t.PutRecord(ChangeKey(c.TenantID, c.ID), c); err != nil {
		return err
	}
	if err := t.Delete(ExpiryKey(c)); err != nil {
		return err
	}
	if err := emit(t, event, by, c); err != nil {
		return err
	}
	msg := fmt.Sprintf("Approval of %s %s", c.Operation, status)
	if reason != "" {
		msg += ": " + reason
	}
	return t.Log(by, c.TenantID, unit.EntityApproval, c.ID, unit.OpUpdate, msg)
}

// Use spends change id of tenant tid, an approved OpDetokenizeBulk, on
// the call of by whose body has the digest target: once, by its
// requester, before its expiry. The call then goes ahead in t.
//
// Returns NotFound, PermissionDenied (another requester's), Conflict (not
// an approved bulk detokenization, another body, used already, expired).
func Use(t *unit.Tx, by unit.Actor, tid, id, target string) error {
	return UseFor(t, OpDetokenizeBulk, by, tid, id, target)
}

// UseFor is Use for a change of operation op (UsedOnce: OpDetokenizeBulk,
// OpExport). Returns what Use returns; Conflict for a change of another
// operation.
func UseFor(t *unit.Tx, op string, by unit.Actor, tid, id, target string) error {
	c, err := Usable(t, by, tid, id, op, target)
	if err != nil {
		return err
	}
	c.UsedAt = t.Now
	if err := t.PutRecord(ChangeKey(tid, id), c); err != nil {
		return err
	}
	return t.Log(by, tid, unit.EntityApproval, id, unit.OpUpdate, "Approval of "+op+" used")
}

// Usable checks that change id of tenant tid is an approved op whose
// approval by may use now for target: its requester, once, before its
// expiry. It writes nothing: Use records the use; a tenant's deletion
// (OpDeleteTenant) removes the change with the tenant instead.
//
// Returns NotFound, PermissionDenied (another requester's), Conflict (not
// an approved op, another target, used already, expired).
func Usable(t *unit.Tx, by unit.Actor, tid, id, op, target string) (*Change, error) {
	c, err := Get(t, tid, id)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Operation != op:
		return nil, unit.Errorf(unit.Conflict, "the approval is not of %s", op)
	case c.RequestedBy != by.ID || c.RequestedByType != by.Type:
		return nil, unit.Errorf(unit.PermissionDenied, "the approval is another key's")
	case c.Status != Applied:
		return nil, unit.Errorf(unit.Conflict, "the approval is %s, not applied", StatusAt(c, t))
	case !c.UsedAt.IsZero():
		return nil, unit.Errorf(unit.Conflict, "the approval was used already")
	case !t.Now.Before(c.ExpiresAt):
		return nil, unit.Errorf(unit.Conflict, "the approval expired")
	case c.Target != target:
		return nil, unit.Errorf(unit.Conflict, "the approval is of another request")
	}
	return c, nil
}
