// Package approvals is the feature of approvals for dangerous operations:
// a tenant's approval policy (m of n approvers, the operations it holds)
// and the changes that wait for it. The root keeps the methods (each
// authenticates, authorizes, and calls this package), decides which calls
// are held, and carries a change out when its last approval lands (the
// operations are other features'); docs/approvals.md is the model.
//
// # What it owns
//
//   - The stored records: the policy (Policy, one per tenant, at
//     PolicyKey) and the changes (Change, at ChangeKey), each sealed with
//     the tenant's keyring, in its own binary format (golden fixtures in
//     the root's testdata/records).
//   - The policy's rules (policy.go): which operations exist (Op*), which
//     need approval (Policy.Needs: changing the policy always does once it
//     exists), who may approve (Policy.IsApprover: the named management
//     applications), and its validation (ValidatePolicy).
//   - A change's life (change.go): Request (pending, with its expiry),
//     Approve (never by its requester, once per approver; the last
//     needed approval calls the caller's apply in the same transaction),
//     Reject (an approver, or the requester withdrawing it), Fail (an
//     approval whose apply no longer applied, recorded after the fact),
//     the expiry of a change decided on, and Use (an approved bulk
//     detokenization spent, once). Each writes its audit line and its
//     event (events.go: approval.requested, approved, applied, rejected,
//     expired, failed), the change as the API shows it (ChangeOf).
//
// # The write path
//
// A change is written by its request and by each decision on it, and by
// nothing else; the policy by its own change. No count or per-tenant row
// is kept: the approvals of a change are in its own record, so two
// approvals of one change serialize on that record only, and changes of
// one tenant do not wait for each other. A held call reads the policy
// (one record); a detokenization does too.
//
// # What it does not do
//
// It authorizes nothing but the decisions (approver, requester), knows no
// operation's effect (the root's apply does), and keeps no payload once a
// change is decided: a new key a change carried is cleared then. A change
// past its expiry is marked expired by the sweeper (expiry.go, its
// schedule entry) or by the first decision on it; decided changes are
// kept.
package approvals
