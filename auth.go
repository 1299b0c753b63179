package tokenvault

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
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

// maxKeyLength bounds the work an absurd header can cause.
const maxKeyLength = 256

// authenticate resolves key to a principal. Every failure (empty, unknown,
// expired, revoked) is the same Unauthenticated error, so a caller learns
// nothing about which keys exist.
//
// It is also where the rate limits apply (ratelimit.go): a failure counts
// against the caller's address, and once the address has used up its
// failures a further one is RateLimited (whatever made it fail, so the
// throttle tells nothing more than Unauthenticated would); a key that
// authenticates is never refused by that throttle, only charged against
// its key's and tenant's limits.
func (t *txn) authenticate(key Credential) (*principal, error) {
	if key == "" || len(key) > maxKeyLength {
		return nil, t.authFailed(unit.ErrUnauthenticatedKey)
	}
	mac := t.v.sys.MAC([]byte(key))
	serveGen, keepGen, cached, err := t.authCacheGens()
	if err != nil {
		return nil, err
	}
	var p *principal
	if cached {
		p, _ = t.v.auth.Get(mac, serveGen, t.Now)
	}
	if p == nil {
		var expires time.Time
		p, expires, err = t.authenticateMAC(mac)
		if err != nil {
			if ErrorKind(err) == Unauthenticated {
				err = t.authFailed(err)
			}
			return nil, err
		}
		if cached {
			t.v.auth.Put(mac, keepGen, p, expires)
		}
	}
	unit.RecordTenant(t.Ctx, p.TenantID)
	if err := t.chargeCall(mac, p); err != nil {
		return nil, err
	}
	return p, nil
}

// authenticateMAC resolves a key's MAC from the store, with the instant
// the key stops working (zero: never).
func (t *txn) authenticateMAC(mac []byte) (*principal, time.Time, error) {
	var ref access.KeyRef
	ok, err := t.GetRecord(barrier.APIKeyLookup(mac), &ref)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !ok {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	// A tenant being deleted keeps its lookups until the deletion reaches
	// them; its keys are refused from the deletion's first commit.
	if deleting, err := t.tenantDeleting(ref.TenantID); err != nil || deleting {
		if err == nil {
			err = unit.ErrUnauthenticatedKey
		}
		return nil, time.Time{}, err
	}
	switch ref.Kind {
	case EntityApplication:
		app, err := t.loadApplication(ref.TenantID, ref.ID)
		if err != nil {
			return nil, time.Time{}, err
		}
		if app == nil {
			return nil, time.Time{}, unit.ErrUnauthenticatedKey
		}
		// The lookup entry is keyed by the same MAC; comparing the stored
		// hash again, in constant time, guards against a stale entry.
		if subtle.ConstantTimeCompare(app.KeyHash, mac) != 1 {
			return nil, time.Time{}, unit.ErrUnauthenticatedKey
		}
		var expires time.Time
		if app.ExpiresAt != nil {
			expires = *app.ExpiresAt
		}
		return appPrincipal(app), expires, nil
	case EntitySession:
		return t.v.sessions.Principal(t.Tx, ref, mac)
	}
	return nil, time.Time{}, unit.ErrUnauthenticatedKey
}

func appPrincipal(app *access.ApplicationRecord) *principal {
	return &principal{
		TenantID:    app.TenantID,
		ActorID:     app.ID,
		ActorType:   ActorApplication,
		ActorName:   app.Name,
		AppType:     app.Type,
		Permissions: app.Permissions,
		Rules:       sortedRules(app.Rules),
	}
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
	if deleting, err := t.tenantDeleting(c.tenantID); err != nil || deleting {
		if err == nil {
			err = unit.ErrUnauthenticatedKey
		}
		return nil, err
	}
	app, err := t.loadApplication(c.tenantID, c.appID)
	if err != nil {
		return nil, err
	}
	if app == nil {
		return nil, unit.ErrUnauthenticatedKey
	}
	return appPrincipal(app), nil
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
