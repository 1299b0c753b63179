package tokenvault

import (
	"context"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The permissions a key can hold. Which application types may hold each is
// in [PermissionsFor].
const (
	PermTokenCreate            = access.PermTokenCreate
	PermTokenRead              = access.PermTokenRead
	PermTokenUpdate            = access.PermTokenUpdate
	PermTokenDelete            = access.PermTokenDelete
	PermTokenSearch            = access.PermTokenSearch
	PermTokenUse               = access.PermTokenUse
	PermFPEEncode              = access.PermFPEEncode
	PermFPEDecode              = access.PermFPEDecode
	PermApplicationCreate      = access.PermApplicationCreate
	PermApplicationRead        = access.PermApplicationRead
	PermApplicationUpdate      = access.PermApplicationUpdate
	PermApplicationDelete      = access.PermApplicationDelete
	PermLogRead                = access.PermLogRead
	PermTokenAccessRead        = access.PermTokenAccessRead
	PermReactorCreate          = access.PermReactorCreate
	PermReactorRead            = access.PermReactorRead
	PermReactorUpdate          = access.PermReactorUpdate
	PermReactorDelete          = access.PermReactorDelete
	PermProxyCreate            = access.PermProxyCreate
	PermProxyRead              = access.PermProxyRead
	PermProxyUpdate            = access.PermProxyUpdate
	PermProxyDelete            = access.PermProxyDelete
	PermTenantRead             = access.PermTenantRead
	PermTenantUpdate           = access.PermTenantUpdate
	PermTenantDelete           = access.PermTenantDelete
	PermTenantMemberRead       = access.PermTenantMemberRead
	PermTenantMemberUpdate     = access.PermTenantMemberUpdate
	PermTenantMemberDelete     = access.PermTenantMemberDelete
	PermTenantInvitationCreate = access.PermTenantInvitationCreate
	PermTenantInvitationRead   = access.PermTenantInvitationRead
	PermTenantInvitationUpdate = access.PermTenantInvitationUpdate
	PermTenantInvitationDelete = access.PermTenantInvitationDelete
	PermWebhookCreate          = access.PermWebhookCreate
	PermWebhookRead            = access.PermWebhookRead
	PermWebhookUpdate          = access.PermWebhookUpdate
	PermWebhookDelete          = access.PermWebhookDelete
	PermSubjectErase           = access.PermSubjectErase
	// PermTokenImport allows ImportTokens (see there).
	PermTokenImport = access.PermTokenImport
)

// ApplicationType is private, public or management.
type ApplicationType = access.ApplicationType

// The three application types.
const (
	// Private applications tokenize, read and use data in backend services
	// where the key stays secret.
	Private = access.Private
	// Public applications collect data in browsers and mobile apps: they
	// may create and update tokens, never read them.
	Public = access.Public
	// Management applications manage the tenant: applications, logs,
	// reactors, proxies, members. They never touch token data.
	Management = access.Management
)

// validApplicationType reports whether t is one of the three types.
func validApplicationType(t ApplicationType) bool { return access.ValidApplicationType(t) }

// PermissionsFor lists, in a stable order, the permissions an application of
// type t may hold.
func PermissionsFor(t ApplicationType) []string { return access.PermissionsFor(t) }

// Transforms shape the data of token responses.
const (
	TransformRedact = access.TransformRedact
	TransformMask   = access.TransformMask
	TransformReveal = access.TransformReveal
)

// AccessRule grants permissions on the tokens in a container (applications)
// or on the tokens matching conditions (sessions), with a transform applied
// to the data of token responses. Rules are evaluated in ascending priority;
// the first that matches and grants the permission decides.
type AccessRule = access.Rule

// Condition restricts a session's rule to tokens whose attribute (id or
// container) equals or starts with a value.
type Condition = access.Condition

// validContainer reports whether c is a container (access.ValidContainer).
func validContainer(c string) bool { return access.ValidContainer(c) }

// validateGrants checks the permissions and rules of an application of type
// typ, filling in defaults (access.ValidateGrants).
func validateGrants(typ ApplicationType, perms []string, rules []AccessRule, fe unit.FieldErrors) {
	access.ValidateGrants(typ, perms, rules, fe)
}

// validateSessionGrants checks what an authorizer grants a session
// (access.ValidateSessionGrants).
func validateSessionGrants(perms []string, rules []AccessRule, fe unit.FieldErrors) {
	access.ValidateSessionGrants(perms, rules, fe)
}

// The access rule engine is access.Decide; these names keep the root's
// call sites as they were.

// tokenScope is what access rules look at on a token: its id and its
// containers.
type tokenScope = access.TokenScope

// Condition attributes and operators, for session rules.
const (
	AttributeID        = access.AttributeID
	AttributeContainer = access.AttributeContainer
	OperatorEquals     = access.OperatorEquals
	OperatorStartsWith = access.OperatorStartsWith
)

// containerContains reports whether container outer contains inner
// (access.ContainerContains).
func containerContains(outer, inner string) bool { return access.ContainerContains(outer, inner) }

// sortedRules returns rules in ascending priority (access.SortedRules).
func sortedRules(rules []AccessRule) []AccessRule { return access.SortedRules(rules) }

// Permission describes one permission and the application types that may
// hold it.
type Permission struct {
	Type             string            `json:"type"`
	ApplicationTypes []ApplicationType `json:"application_types"`
}

// ListPermissions lists the permissions an application of type typ may hold
// (every permission when typ is empty), so a tool can offer only valid
// choices. Any valid key may call it; nothing of the tenant is revealed.
//
// Returns Invalid for an unknown type, Unauthenticated for a key that is
// missing, unknown or expired, RateLimited over a rate limit, or Internal.
func (v *Vault) ListPermissions(ctx context.Context, key Credential, typ ApplicationType) ([]Permission, error) {
	if typ != "" && !validApplicationType(typ) {
		return nil, unit.InvalidField("application_type", "must be private, public or management")
	}
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authenticate(key)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []Permission
	for name, holders := range access.Holders() {
		if typ == "" || slices.Contains(holders, typ) {
			out = append(out, Permission{Type: name, ApplicationTypes: slices.Clone(holders)})
		}
	}
	slices.SortFunc(out, func(a, b Permission) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	return out, nil
}
