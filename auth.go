package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Actor types recorded in logs and in created_by/modified_by.
const (
	ActorApplication = unit.ActorApplication
	ActorUser        = unit.ActorUser
	ActorSession     = unit.ActorSession
	ActorSystem      = unit.ActorSystem
)

// actor is who did something, for logs and events (unit.Actor).
type actor = unit.Actor

var systemActor = unit.SystemActor

// principal is an authenticated key (access.Principal).
type principal = access.Principal

// grants are permissions and rules, as held by a key (access.Grants).
type grants = access.Grants

// maxKeyLength bounds the work an absurd credential can cause
// (access.MaxKeyLength).
const maxKeyLength = access.MaxKeyLength

// authenticate resolves key to a principal (access.Authenticator: every
// failure is the same Unauthenticated error; the rate limits apply).
func (t *txn) authenticate(key Credential) (*principal, error) {
	return t.v.authn.Authenticate(t.Tx, string(key))
}

// credential is who calls: a key (an application's or a session's), or,
// for the client given to reactor and proxy code, an application named by
// id. Keys are stored only hashed, so the Vault acts for such an
// application directly, with exactly its permissions and rules.
type credential struct {
	key      Credential
	tenantID string
	appID    string
}

func keyCredential(key Credential) credential { return credential{key: key} }

func appCredential(tid, appID string) credential { return credential{tenantID: tid, appID: appID} }

// authenticateAs resolves c to a principal; a deleted or expired
// application is Unauthenticated, like its key.
func (t *txn) authenticateAs(c credential) (*principal, error) {
	if c.appID == "" {
		return t.authenticate(c.key)
	}
	p, err := access.AsApplication(t.Tx, c.tenantID, c.appID)
	if err != nil {
		return nil, err
	}
	// A refusal of the application's call is its tenant's (denied.go).
	unit.RecordSubject(t.Ctx, p.TenantID, p.Actor(), "")
	return t.v.authn.CallPurpose(t.Tx, p)
}

// authorize authenticates key and checks that it holds perm.
func (t *txn) authorize(key Credential, perm string) (*principal, error) {
	return t.authorizeAs(keyCredential(key), perm)
}

// authorizeAs authenticates c and checks that it holds perm.
func (t *txn) authorizeAs(c credential, perm string) (*principal, error) {
	p, err := t.authenticateAs(c)
	if err != nil {
		return nil, err
	}
	if !p.Has(perm) {
		return nil, unit.Forbidden(perm)
	}
	return p, nil
}

// AuthenticateOperator applies the failed-authentication throttle
// (Options.Limits.AuthFailuresPerMinute, per [CallInfo].ClientAddress) to a
// credential the host checks itself, such as package httpapi's operator
// key: a false answer of valid counts as a failed authentication. A valid
// credential is never refused by the throttle, from any address. It
// returns nil for a valid credential, Unauthenticated for a wrong one, and
// RateLimited for a wrong one from an address that has used up its
// failures.
func (v *Vault) AuthenticateOperator(ctx context.Context, valid func() bool) error {
	if valid() {
		return nil
	}
	return v.authFailed(ctx, errOperatorUnauthenticated)
}

var errOperatorUnauthenticated = &Error{Kind: Unauthenticated, Message: "missing or wrong operator key"}

// authCache remembers the principals of keys seen recently, so the hot
// path (a key used again and again) reads nothing from the store to
// authenticate; a regenerated, deleted or expired key is refused at once,
// by every Vault on the store (access.AuthCache, and its Gens for which
// generation a transaction serves and keeps entries under).
type authCache = access.AuthCache[*principal]
