package events

import (
	"slices"
	"strings"
)

// Type is one entry of the event catalogue (the root's WebhookEventType).
type Type struct {
	// Name is the type, as in Info.Type and a webhook's events.
	Name string `json:"name"`
	// Description says when the event is emitted.
	Description string `json:"description"`
	// HighVolume events (a read of a token, an invocation of a proxy or
	// reactor) are delivered only to webhooks that name them: "*" does
	// not include them.
	HighVolume bool `json:"high_volume,omitempty"`
}

// Event types (Info.Type). The root names each Event<Name>.
const (
	TokenCreated             = "token.created"
	TokenUpdated             = "token.updated"
	TokenDeleted             = "token.deleted"
	TokenExpired             = "token.expired"
	TokenPropertyExpired     = "token.property.expired"
	TokenRead                = "token.read"
	TokenIntentCreated       = "token-intent.created"
	TokenIntentDeleted       = "token-intent.deleted"
	TokenIntentConverted     = "token-intent.converted"
	ApplicationCreated       = "application.created"
	ApplicationUpdated       = "application.updated"
	ApplicationDeleted       = "application.deleted"
	ApplicationKeyCreated    = "application.key.created"
	ApplicationKeyDeleted    = "application.key.deleted"
	ProxyCreated             = "proxy.created"
	ProxyUpdated             = "proxy.updated"
	ProxyDeleted             = "proxy.deleted"
	ProxyInvoked             = "proxy.invoked"
	ReactorCreated           = "reactor.created"
	ReactorUpdated           = "reactor.updated"
	ReactorDeleted           = "reactor.deleted"
	ReactorInvoked           = "reactor.invoked"
	ReactorCompleted         = "reactor.completed"
	ReactorFailed            = "reactor.failed"
	SessionCreated           = "session.created"
	SessionAuthorized        = "session.authorized"
	TenantMemberCreated      = "tenant.member.created"
	TenantMemberDeleted      = "tenant.member.deleted"
	TenantInvitationCreated  = "tenant.invitation.created"
	TenantInvitationResent   = "tenant.invitation.resent"
	TenantInvitationAccepted = "tenant.invitation.accepted"
	TenantInvitationDeleted  = "tenant.invitation.deleted"
	TenantPurposesUpdated    = "tenant.purposes.updated"
	WebhookTest              = "webhook.test"
	AccessAnomaly            = "access.anomaly"

	// The events of changes waiting for approval (internal/approvals).
	ApprovalRequested = "approval.requested"
	ApprovalApproved  = "approval.approved"
	ApprovalApplied   = "approval.applied"
	ApprovalRejected  = "approval.rejected"
	ApprovalExpired   = "approval.expired"
	ApprovalFailed    = "approval.failed"

	// The events of exports of a tenant's tokens (internal/export).
	ExportCompleted = "export.completed"
	ExportFailed    = "export.failed"
	// SubjectErased: a data subject was erased (internal/subjects).
	SubjectErased = "subject.erased"
)

// catalogue is the catalogue, in the order GET
// /webhooks/event-types lists it.
var catalogue = []Type{
	{TokenCreated, "A token was created (not a deduplicated create, which returns an existing token).", false},
	{TokenUpdated, "A token's data, metadata, containers, search indexes or expiry changed.", false},
	{TokenDeleted, "A token was deleted by a caller.", false},
	{TokenExpired, "A token passed its expires_at and the sweeper removed it.", false},
	{TokenPropertyExpired, "The sweeper removed a card token's cvc (its retention passed).", false},
	{TokenRead, "A token's data was returned to a caller, in clear or masked.", true},
	{TokenIntentCreated, "A token intent was created.", false},
	{TokenIntentDeleted, "A token intent was deleted, or expired unconverted.", false},
	{TokenIntentConverted, "A token intent was converted into a token.", false},
	{ApplicationCreated, "An application was created.", false},
	{ApplicationUpdated, "An application's name, permissions, rules or expiry changed.", false},
	{ApplicationDeleted, "An application was deleted.", false},
	{ApplicationKeyCreated, "An application's key was regenerated: the new key.", false},
	{ApplicationKeyDeleted, "An application's key was regenerated: the old key, which no longer works.", false},
	{ProxyCreated, "A proxy was created.", false},
	{ProxyUpdated, "A proxy was changed.", false},
	{ProxyDeleted, "A proxy was deleted.", false},
	{ProxyInvoked, "A proxy forwarded a request.", true},
	{ReactorCreated, "A reactor was created.", false},
	{ReactorUpdated, "A reactor was changed.", false},
	{ReactorDeleted, "A reactor was deleted.", false},
	{ReactorInvoked, "A reactor was invoked.", true},
	{ReactorCompleted, "An asynchronous reactor invocation succeeded.", false},
	{ReactorFailed, "An asynchronous reactor invocation failed.", false},
	{SessionCreated, "A session was created.", false},
	{SessionAuthorized, "A session was authorized.", false},
	{TenantMemberCreated, "A member joined the tenant.", false},
	{TenantMemberDeleted, "A member was removed from the tenant.", false},
	{TenantInvitationCreated, "An invitation was sent.", false},
	{TenantInvitationResent, "An invitation was sent again.", false},
	{TenantInvitationAccepted, "An invitation was accepted.", false},
	{TenantInvitationDeleted, "An invitation was deleted, or expired.", false},
	{TenantPurposesUpdated, "The tenant's list of purposes of access was replaced.", false},
	{WebhookTest, "Sent to one webhook by POST /webhooks/{id}/test.", false},
	{AccessAnomaly, "An application crossed its reveal budget, or one of its keys read a decoy token (once per crossing; the application may be frozen).", false},
	{ApprovalRequested, "A change that needs approval was requested: it waits as a pending change.", false},
	{ApprovalApproved, "An approver approved a pending change.", false},
	{ApprovalApplied, "A pending change had its last needed approval and took effect.", false},
	{ApprovalRejected, "A pending change was rejected by an approver or withdrawn by its requester.", false},
	{ApprovalExpired, "A pending change expired before it was approved.", false},
	{ApprovalFailed, "A pending change had its last needed approval but no longer applied.", false},
	{ExportCompleted, "The tenant's tokens were exported, encrypted to a recipient: the signed manifest, no data.", false},
	{ExportFailed, "An export of the tenant's tokens failed after it began: the recipient holds a partial file no manifest describes.", false},
	{SubjectErased, "A data subject was erased: its key destroyed, its tokens removed; the erasure certificate.", false},
}

// Types returns the event catalogue, in the order GET
// /webhooks/event-types lists it: a copy, the same for everyone.
func Types() []Type { return slices.Clone(catalogue) }

// byName indexes the catalogue by name, for Lookup.
var byName = func() map[string]Type {
	m := make(map[string]Type, len(catalogue))
	for _, e := range catalogue {
		m[e.Name] = e
	}
	return m
}()

// Lookup looks a name up in the catalogue.
func Lookup(name string) (Type, bool) {
	e, ok := byName[name]
	return e, ok
}

// Subscribes reports whether a webhook's events include et.
func Subscribes(events []string, et Type) bool {
	for _, e := range events {
		if e == et.Name || e == "*" && !et.HighVolume {
			return true
		}
	}
	return false
}

// EndsObject reports whether an event of type typ ends its object's
// life, so that the object's sequence counter is removed with it: a
// deletion (not a key's: the application goes on), a token's expiry, an
// intent's conversion, an invitation's acceptance. Sessions, which no
// event ends, have theirs removed with them (internal/sessions, Delete).
func EndsObject(typ string) bool {
	switch typ {
	case TokenExpired, TokenIntentConverted, TenantInvitationAccepted,
		ApprovalApplied, ApprovalRejected, ApprovalExpired, ApprovalFailed:
		return true
	case ApplicationKeyDeleted:
		return false
	}
	return strings.HasSuffix(typ, ".deleted")
}
