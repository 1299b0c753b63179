package unit

// The vocabulary every feature shares: what the audit log records (entity
// types, operations, actor types) and the token types. The root package
// gives each its public name.

// Entity types: the values of Log.EntityType.
const (
	EntityApplication      = "application"
	EntityBank             = "bank"
	EntityCard             = "card"
	EntityFPE              = "fpe"
	EntityProxy            = "proxy"
	EntityReactor          = "reactor"
	EntityReactorFormula   = "reactor_formula"
	EntitySession          = "session"
	EntityTenant           = "tenant"
	EntityTenantMember     = "tenant_member"
	EntityTenantInvitation = "tenant_invitation"
	EntityToken            = "token"
	EntityTokenIntent      = "token_intent"
	EntityWebhook          = "webhook"
	// EntityApproval is a change waiting for approval (internal/approvals).
	EntityApproval = "approval"
	// EntityExport is an export of a tenant's tokens (internal/transfer).
	EntityExport = "export"
	// EntitySubject is a data subject's erasure (internal/subjects): the
	// line's entity id is the erasure certificate's id.
	EntitySubject = "subject"
)

// Operations: the values of Log.Operation.
const (
	OpCreate = "create"
	OpRead   = "read"
	OpUpdate = "update"
	OpDelete = "delete"
	OpInvoke = "invoke"
	// OpDenied is the line of a refused call (the root's denied.go): its
	// outcome is OutcomeDenied, every other operation's OutcomeAllowed.
	OpDenied = "denied"
)

// Outcomes of a log line, derived from its operation (ListLogs filters
// by them).
const (
	OutcomeAllowed = "allowed"
	OutcomeDenied  = "denied"
)

// OutcomeOf is the outcome of a line of operation op.
func OutcomeOf(op string) string {
	if op == OpDenied {
		return OutcomeDenied
	}
	return OutcomeAllowed
}

// Actor types recorded in logs and in created_by/modified_by.
const (
	ActorApplication = "application"
	ActorUser        = "user"
	ActorSession     = "session"
	ActorSystem      = "system"
)

// The token types.
const (
	TypeToken = "token"
	TypeCard  = "card"
	TypeBank  = "bank"
)

// Actor is who did something, for logs and events.
type Actor struct {
	ID   string
	Type string
	// Name is an application's name as of its authentication, when known,
	// for the events it makes; empty otherwise.
	Name string
}

// SystemActor is the Vault itself: sweeps, expiries, retention.
var SystemActor = Actor{Type: ActorSystem}
