package tokenvault

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The permissions a key can hold. Which application types may hold each is
// in [PermissionsFor].
const (
	PermTokenCreate = "token:create"
	PermTokenRead   = "token:read"
	PermTokenUpdate = "token:update"
	PermTokenDelete = "token:delete"
	PermTokenSearch = "token:search"
	PermTokenUse    = "token:use"

	// PermFPEEncode and PermFPEDecode allow stateless format-preserving
	// encryption (FPEEncode, FPEDecode). Decoding reveals data, so only
	// private applications may hold it.
	PermFPEEncode = "fpe:encode"
	PermFPEDecode = "fpe:decode"

	PermApplicationCreate = "application:create"
	PermApplicationRead   = "application:read"
	PermApplicationUpdate = "application:update"
	PermApplicationDelete = "application:delete"

	PermLogRead = "log:read"

	// PermTokenAccessRead allows reading who accessed a token's data
	// (TokenAccess, SubjectAccess): management applications only, which
	// see the audit lines of those accesses, never the data.
	PermTokenAccessRead = "token:access:read"

	PermReactorCreate = "reactor:create"
	PermReactorRead   = "reactor:read"
	PermReactorUpdate = "reactor:update"
	PermReactorDelete = "reactor:delete"

	PermProxyCreate = "proxy:create"
	PermProxyRead   = "proxy:read"
	PermProxyUpdate = "proxy:update"
	PermProxyDelete = "proxy:delete"

	PermTenantRead   = "tenant:read"
	PermTenantUpdate = "tenant:update"
	PermTenantDelete = "tenant:delete"

	PermTenantMemberRead   = "tenant:member:read"
	PermTenantMemberUpdate = "tenant:member:update"
	PermTenantMemberDelete = "tenant:member:delete"

	PermTenantInvitationCreate = "tenant:invitation:create"
	PermTenantInvitationRead   = "tenant:invitation:read"
	PermTenantInvitationUpdate = "tenant:invitation:update"
	PermTenantInvitationDelete = "tenant:invitation:delete"

	// Webhook subscriptions (webhooks.go): management applications only.
	PermWebhookCreate = "webhook:create"
	PermWebhookRead   = "webhook:read"
	PermWebhookUpdate = "webhook:update"
	PermWebhookDelete = "webhook:delete"
)

// ApplicationType is private, public or management.
type ApplicationType = access.ApplicationType

// The three application types.
const (
	// Private applications tokenize, read and use data in backend services
	// where the key stays secret.
	Private ApplicationType = "private"
	// Public applications collect data in browsers and mobile apps: they
	// may create and update tokens, never read them.
	Public ApplicationType = "public"
	// Management applications manage the tenant: applications, logs,
	// reactors, proxies, members. They never touch token data.
	Management ApplicationType = "management"
)

// validApplicationType reports whether t is one of the three types.
func validApplicationType(t ApplicationType) bool {
	return t == Private || t == Public || t == Management
}

// permissionHolders says which application types may hold each permission.
var permissionHolders = map[string][]ApplicationType{
	PermTokenCreate: {Public, Private},
	PermTokenUpdate: {Public, Private},
	PermTokenRead:   {Private},
	PermTokenSearch: {Private},
	PermTokenDelete: {Private},
	PermTokenUse:    {Private},
	PermFPEEncode:   {Public, Private},
	PermFPEDecode:   {Private},

	// Token intents (intents.go): every public application holds
	// token-intent:create by default, whether granted or not.
	PermTokenIntentCreate: {Public, Private},
	PermTokenIntentRead:   {Private},
	PermTokenIntentDelete: {Private},
}

// managementPermissions are held by management applications only.
var managementPermissions = []string{
	PermApplicationCreate, PermApplicationRead, PermApplicationUpdate, PermApplicationDelete,
	PermLogRead, PermTokenAccessRead,
	PermReactorCreate, PermReactorRead, PermReactorUpdate, PermReactorDelete,
	PermProxyCreate, PermProxyRead, PermProxyUpdate, PermProxyDelete,
	PermTenantRead, PermTenantUpdate, PermTenantDelete,
	PermTenantMemberRead, PermTenantMemberUpdate, PermTenantMemberDelete,
	PermTenantInvitationCreate, PermTenantInvitationRead, PermTenantInvitationUpdate, PermTenantInvitationDelete,
	PermWebhookCreate, PermWebhookRead, PermWebhookUpdate, PermWebhookDelete,
}

func init() {
	for _, p := range managementPermissions {
		permissionHolders[p] = []ApplicationType{Management}
	}
}

// PermissionsFor lists, in a stable order, the permissions an application of
// type t may hold.
func PermissionsFor(t ApplicationType) []string {
	var out []string
	for p, types := range permissionHolders {
		if slices.Contains(types, t) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// isTokenPermission reports whether access rules may grant p: the
// permissions on token data, not token:access:read, which reads audit
// lines and is held whole by management applications.
func isTokenPermission(p string) bool {
	return len(p) > 6 && p[:6] == "token:" && p != PermTokenAccessRead
}

// Transforms shape the data of token responses.
const (
	TransformRedact = "redact"
	TransformMask   = "mask"
	TransformReveal = "reveal"
)

// AccessRule grants permissions on the tokens in a container (applications)
// or on the tokens matching conditions (sessions), with a transform applied
// to the data of token responses. Rules are evaluated in ascending priority;
// the first that matches and grants the permission decides.
type AccessRule = access.Rule

// Condition restricts a session's rule to tokens whose attribute (id or
// container) equals or starts with a value.
type Condition = access.Condition

var containerPattern = regexp.MustCompile(`^/([A-Za-z0-9_-]+/)*$`)

// validContainer reports whether c is a container: it starts and ends with
// "/", and its segments are letters, digits, "-" and "_".
func validContainer(c string) bool { return len(c) <= 1000 && containerPattern.MatchString(c) }

// validateGrants checks the permissions and rules of an application of type
// typ, filling in defaults (a rule without transform redacts). Paths in the
// errors are relative to the request body.
func validateGrants(typ ApplicationType, perms []string, rules []AccessRule, fe unit.FieldErrors) {
	checkGrants(grantee{typ: typ, name: fmt.Sprintf("a %s application", typ)}, perms, rules, fe)
}

// validateSessionGrants checks what an authorizer grants a session: token
// permissions, and rules scoped by conditions rather than containers.
func validateSessionGrants(perms []string, rules []AccessRule, fe unit.FieldErrors) {
	checkGrants(grantee{typ: Private, name: "a session", session: true}, perms, rules, fe)
}

// grantee is who receives grants: an application of a type, or a session
// (which may hold what a private application may).
type grantee struct {
	typ     ApplicationType
	name    string
	session bool
}

func checkGrants(g grantee, perms []string, rules []AccessRule, fe unit.FieldErrors) {
	if len(perms) == 0 && len(rules) == 0 {
		fe.Add("permissions", "either permissions or rules must be non-empty")
	}
	checkPerms := func(path string, perms []string, tokenOnly bool) {
		seen := map[string]bool{}
		for i, p := range perms {
			pp := fmt.Sprintf("%s[%d]", path, i)
			holders, known := permissionHolders[p]
			switch {
			case !known:
				fe.Add(pp, "unknown permission %q", p)
			case tokenOnly && !isTokenPermission(p):
				fe.Add(pp, "access rules grant token permissions only, not %q", p)
			case !slices.Contains(holders, g.typ):
				fe.Add(pp, "%s may not hold %q", g.name, p)
			case seen[p]:
				fe.Add(pp, "duplicate permission %q", p)
			}
			seen[p] = true
		}
	}
	checkPerms("permissions", perms, false)
	if len(rules) > 0 && g.typ == Management {
		fe.Add("rules", "management applications hold permissions, not access rules")
		return
	}
	priorities := map[int]bool{}
	for i := range rules {
		r := &rules[i]
		path := fmt.Sprintf("rules[%d]", i)
		if r.Priority < 1 {
			fe.Add(path+".priority", "must be 1 or more")
		} else if priorities[r.Priority] {
			fe.Add(path+".priority", "another rule has priority %d", r.Priority)
		}
		priorities[r.Priority] = true
		if g.session {
			checkSessionScope(path, r, fe)
		} else {
			checkApplicationScope(path, r, fe)
		}
		switch r.Transform {
		case "":
			r.Transform = TransformRedact
		case TransformRedact, TransformMask, TransformReveal:
		default:
			fe.Add(path+".transform", "must be redact, mask or reveal")
		}
		if len(r.Permissions) == 0 {
			fe.Add(path+".permissions", "must not be empty")
		}
		checkPerms(path+".permissions", r.Permissions, true)
		if len(r.Description) > 1000 {
			fe.Add(path+".description", "must be at most 1000 characters")
		}
	}
}

// checkApplicationScope: an application's rule names a container.
func checkApplicationScope(path string, r *AccessRule, fe unit.FieldErrors) {
	if len(r.Conditions) > 0 {
		fe.Add(path+".conditions", "conditions are for sessions; applications scope rules with container")
	}
	if r.Container == "" {
		fe.Add(path+".container", "is required")
	} else if !validContainer(r.Container) {
		fe.Add(path+".container", "must start and end with / and hold letters, digits, - and _ segments")
	}
}

// maxConditionValue bounds a condition's value, like a container.
const maxConditionValue = 1000

// checkSessionScope: a session's rule is scoped by conditions (none means
// every token), never by a container.
func checkSessionScope(path string, r *AccessRule, fe unit.FieldErrors) {
	if r.Container != "" {
		fe.Add(path+".container", "sessions scope rules with conditions, not container")
	}
	for j, c := range r.Conditions {
		cp := fmt.Sprintf("%s.conditions[%d]", path, j)
		if c.Attribute != AttributeID && c.Attribute != AttributeContainer {
			fe.Add(cp+".attribute", "must be id or container")
		}
		if c.Operator != OperatorEquals && c.Operator != OperatorStartsWith {
			fe.Add(cp+".operator", "must be equals or starts_with")
		}
		switch {
		case c.Value == "":
			fe.Add(cp+".value", "is required")
		case len(c.Value) > maxConditionValue:
			fe.Add(cp+".value", "must be at most %d characters", maxConditionValue)
		default:
			checkNoControl(cp+".value", c.Value, fe) // an id or a container
		}
	}
}
