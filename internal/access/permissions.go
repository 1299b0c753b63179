package access

import "slices"

// The permissions a key can hold (the root names each tokenvault.Perm*).
// Which application types may hold each is in [PermissionsFor].
const (
	PermTokenCreate = "token:create"
	PermTokenRead   = "token:read"
	PermTokenUpdate = "token:update"
	PermTokenDelete = "token:delete"
	PermTokenSearch = "token:search"
	PermTokenUse    = "token:use"

	// PermFPEEncode and PermFPEDecode allow stateless format-preserving
	// encryption. Decoding reveals data, so only private applications may
	// hold it.
	PermFPEEncode = "fpe:encode"
	PermFPEDecode = "fpe:decode"

	// Token intents: every public application holds token-intent:create by
	// default, whether granted or not.
	PermTokenIntentCreate = "token-intent:create"
	PermTokenIntentRead   = "token-intent:read"
	PermTokenIntentDelete = "token-intent:delete"

	PermApplicationCreate = "application:create"
	PermApplicationRead   = "application:read"
	PermApplicationUpdate = "application:update"
	PermApplicationDelete = "application:delete"

	PermLogRead = "log:read"

	// PermTokenAccessRead allows reading who accessed a token's data:
	// management applications only, which see the audit lines of those
	// accesses, never the data.
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

	// Webhook subscriptions: management applications only.
	PermWebhookCreate = "webhook:create"
	PermWebhookRead   = "webhook:read"
	PermWebhookUpdate = "webhook:update"
	PermWebhookDelete = "webhook:delete"

	// PermTokenExport allows exporting the tenant's tokens, encrypted to
	// a recipient's public key (the root's ExportTokens): management
	// applications only, which never see the data. No other permission
	// implies it; a tenant's approval policy can hold every export
	// (token.export).
	PermTokenExport = "token:export"
	// PermSubjectErase allows erasing a data subject (destroying its key,
	// removing its tokens) and reading its erasure certificate:
	// management applications only. An erasure destroys, it never reads.
	PermSubjectErase = "subject:erase"
	// PermTokenImport allows importing tokens that keep their ids
	// (ImportTokens): choosing ids is a privilege no create grants. It is
	// held directly by private applications only, never through an
	// access rule or a session; each token also needs token:create on
	// its containers.
	PermTokenImport = "token:import"
)

// The three application types (tokenvault.Private, Public, Management).
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

// ValidApplicationType reports whether t is one of the three types.
func ValidApplicationType(t ApplicationType) bool {
	return t == Private || t == Public || t == Management
}

// holders says which application types may hold each permission. It is
// never changed after init; readers get copies (Holders).
var holders = map[string][]ApplicationType{
	PermTokenCreate: {Public, Private},
	PermTokenUpdate: {Public, Private},
	PermTokenRead:   {Private},
	PermTokenSearch: {Private},
	PermTokenDelete: {Private},
	PermTokenUse:    {Private},
	PermFPEEncode:   {Public, Private},
	PermFPEDecode:   {Private},

	PermTokenIntentCreate: {Public, Private},
	PermTokenIntentRead:   {Private},
	PermTokenIntentDelete: {Private},

	PermTokenImport: {Private},
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
	PermTokenExport,
	PermSubjectErase,
}

func init() {
	for _, p := range managementPermissions {
		holders[p] = []ApplicationType{Management}
	}
}

// Holders returns every permission with the application types that may
// hold it, in a new map (the caller may change it).
func Holders() map[string][]ApplicationType {
	out := make(map[string][]ApplicationType, len(holders))
	for p, types := range holders {
		out[p] = slices.Clone(types)
	}
	return out
}

// PermissionsFor lists, in a stable order, the permissions an application
// of type t may hold.
func PermissionsFor(t ApplicationType) []string {
	var out []string
	for p, types := range holders {
		if slices.Contains(types, t) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// IsTokenPermission reports whether access rules may grant p: the
// permissions on token data, not token:access:read, which reads audit
// lines and is held whole by management applications, nor token:import,
// held directly.
func IsTokenPermission(p string) bool {
	return len(p) > 6 && p[:6] == "token:" && p != PermTokenAccessRead && p != PermTokenExport && p != PermTokenImport
}

// ManagementPermissions returns, in a new slice, the permissions held by
// management applications only, in the order they were added to the API.
func ManagementPermissions() []string { return slices.Clone(managementPermissions) }
