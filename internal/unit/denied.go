package unit

import (
	"context"
	"errors"
)

// A denied call's record. The authenticator notes, in the call's
// CallInfo, whose key the call presented as soon as the key's tenant is
// known (RecordSubject), whether the key then authenticates or not; the
// Vault reads it once the call's unit of work has failed with a denial
// (Hooks.Ended), to write the denied line to that tenant's log in a
// transaction of its own. A key the store does not know leaves no
// subject: it belongs to no tenant.

// Subject is whose key a call presented: its tenant and actor, and, when
// the key failed to authenticate, why (Failure: "expired application",
// never any part of the key).
type Subject struct {
	TenantID string
	Actor    Actor
	Failure  string
}

// RecordSubject notes, in ctx's CallInfo if any, that the call's key is
// actor's of tenant tid, and failure, why it did not authenticate ("":
// it did). The first one wins: a call presents one key.
func RecordSubject(ctx context.Context, tid string, actor Actor, failure string) {
	if info := CallFrom(ctx); info != nil && tid != "" {
		info.subject.CompareAndSwap(nil, &Subject{TenantID: tid, Actor: actor, Failure: failure})
	}
}

// Subject is whose key the call presented, or nil if no key of a known
// tenant was.
func (c *CallInfo) Subject() *Subject { return c.subject.Load() }

// MarkDenied reports whether this is the first time the call is marked
// denied: a call's denial is recorded once, however many units of work
// it ran.
func (c *CallInfo) MarkDenied() bool { return c.denied.CompareAndSwap(false, true) }

// MessageOf is err's message as the caller reads it (an *Error's
// Message), or "" for an error that is not one.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}
