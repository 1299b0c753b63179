package access

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxKeyLength bounds the work an absurd credential can cause: a longer
// one is refused before it is hashed.
const MaxKeyLength = 256

// Limits charges the calls of authenticated keys and counts failed
// authentications (internal/ratelimit's Limits, which imports this
// package, so it comes in as an interface).
type Limits interface {
	// ChargeCall charges a call of the key whose keyed hash is mac,
	// authenticated as p, against its key's and tenant's limits.
	ChargeCall(ctx context.Context, mac []byte, p *Principal, now time.Time) error
	// AuthFailed counts failure against the caller's address and returns
	// the error to answer.
	AuthFailed(ctx context.Context, failure error, now time.Time) error
}

// SessionKeys resolves a session key's lookup entry to its principal
// (internal/sessions' Service, which imports this package).
type SessionKeys interface {
	Principal(t *unit.Tx, ref KeyRef, mac []byte) (*Principal, time.Time, error)
}

// Authenticator resolves the keys of one Vault to principals: what it
// needs of the Vault, set when the Vault opens. It reads a key's lookup
// entry, its application or session and its tenant's state in the
// caller's unit of work, and keeps what it read in the Vault's AuthCache.
type Authenticator struct {
	// Sys is the Vault's system keyring: a key is looked up by its keyed
	// MAC.
	Sys *barrier.Keys
	// Cache keeps recently authenticated principals.
	Cache *AuthCache[*Principal]
	// Limits are the Vault's rate limits.
	Limits Limits
	// Sessions resolves session keys.
	Sessions SessionKeys
	// Now is the Vault's clock, which the rate limits run on.
	Now func() time.Time
	// Purposes is the tenants' lists of purposes of access, which a
	// call's purpose is checked against (CallPurpose).
	Purposes PurposeList
}

// CallPurpose gives p the purpose of access the call of t names
// (unit.PurposeOf), on a copy: p itself when the call names none.
//
// Returns Invalid (field purpose) for a purpose the tenant's list does
// not hold; reading the list is the only cost, and only calls that name a
// purpose pay it.
func (a *Authenticator) CallPurpose(t *unit.Tx, p *Principal) (*Principal, error) {
	purpose := unit.PurposeOf(t.Ctx)
	if purpose == "" {
		return p, nil
	}
	if !ValidPurposeName(purpose) {
		return nil, UnknownPurposeError()
	}
	if a.Purposes == nil {
		return nil, UnknownPurposeError()
	}
	ok, err := a.Purposes.HasPurpose(t, p.TenantID, purpose)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, UnknownPurposeError()
	}
	return p.WithPurpose(purpose), nil
}

// Authenticate resolves key to a principal in t. Every failure (empty,
// unknown, expired, revoked) is the same Unauthenticated error, so a
// caller learns nothing about which keys exist.
//
// It is also where the rate limits apply: a failure counts against the
// caller's address, and once the address has used up its failures a
// further one is RateLimited (whatever made it fail, so the throttle
// tells nothing more than Unauthenticated would); a key that
// authenticates is never refused by that throttle, only charged against
// its key's and tenant's limits.
func (a *Authenticator) Authenticate(t *unit.Tx, key string) (*Principal, error) {
	if key == "" || len(key) > MaxKeyLength {
		return nil, a.Limits.AuthFailed(t.Ctx, unit.ErrUnauthenticatedKey, a.Now())
	}
	mac := a.Sys.MAC([]byte(key))
	serveGen, keepGen, cached, err := a.Cache.Gens(t)
	if err != nil {
		return nil, err
	}
	var p *Principal
	if cached {
		p, _ = a.Cache.Get(mac, serveGen, t.Now)
	}
	if p == nil {
		var expires time.Time
		p, expires, err = a.Resolve(t, mac)
		if err != nil {
			if unit.ErrorKind(err) == unit.Unauthenticated {
				err = a.Limits.AuthFailed(t.Ctx, err, a.Now())
			}
			return nil, err
		}
		if cached {
			a.Cache.Put(mac, keepGen, p, expires)
		}
	}
	unit.RecordTenant(t.Ctx, p.TenantID)
	unit.RecordSubject(t.Ctx, p.TenantID, p.Actor(), "")
	if err := a.Limits.ChargeCall(t.Ctx, mac, p, a.Now()); err != nil {
		return nil, err
	}
	return a.CallPurpose(t, p)
}

// Resolve reads, in t, the principal of the key whose keyed MAC is mac,
// with the instant the key stops working (zero: never).
func (a *Authenticator) Resolve(t *unit.Tx, mac []byte) (*Principal, time.Time, error) {
	var ref KeyRef
	ok, err := t.GetRecord(barrier.APIKeyLookup(mac), &ref)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !ok {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	// A tenant being deleted keeps its lookups until the deletion reaches
	// them; its keys are refused from the deletion's first commit.
	if err := tenantUsable(t, ref.TenantID); err != nil {
		return nil, time.Time{}, err
	}
	p, expires, err := a.resolveRef(t, ref, mac)
	if k := unit.ErrorKind(err); k == unit.Unauthenticated || k == unit.PermissionDenied {
		// The key is one of this tenant's, refused: its denial is the
		// tenant's to see (unit.RecordSubject).
		unit.RecordSubject(t.Ctx, ref.TenantID, unit.Actor{ID: ref.ID, Type: ref.Kind}, failureOf(t, ref, err))
	}
	return p, expires, err
}

// failureOf says why the key of ref was refused with err, for the denied
// line of its tenant's log: no part of the key, only which state of its
// application or session refused it.
func failureOf(t *unit.Tx, ref KeyRef, err error) string {
	if unit.ErrorKind(err) != unit.Unauthenticated {
		return unit.MessageOf(err)
	}
	if ok, _ := t.Has(barrier.Tenant(ref.TenantID).Record(ref.Kind, ref.ID)); ok {
		return "the key's " + ref.Kind + " is expired, or the key was replaced"
	}
	return "the key's " + ref.Kind + " no longer exists"
}

// resolveRef is Resolve for the key whose lookup entry is ref.
func (a *Authenticator) resolveRef(t *unit.Tx, ref KeyRef, mac []byte) (*Principal, time.Time, error) {
	switch ref.Kind {
	case unit.EntityApplication:
		app, err := LoadApplication(t, ref.TenantID, ref.ID)
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
		if err := usable(app); err != nil {
			return nil, time.Time{}, err
		}
		var expires time.Time
		if app.ExpiresAt != nil {
			expires = *app.ExpiresAt
		}
		return AppPrincipal(app), expires, nil
	case unit.EntitySession:
		return a.Sessions.Principal(t, ref, mac)
	}
	return nil, time.Time{}, unit.ErrUnauthenticatedKey
}

// AsApplication returns the principal of application appID of tenant
// tid, read in t: how the client given to reactor and proxy code acts,
// with exactly the application's permissions and rules (keys are stored
// only hashed). A deleted or expired application, or one of a tenant
// being deleted, is Unauthenticated, like its key. No rate limit applies.
func AsApplication(t *unit.Tx, tid, appID string) (*Principal, error) {
	if err := tenantUsable(t, tid); err != nil {
		return nil, err
	}
	app, err := LoadApplication(t, tid, appID)
	if err != nil {
		return nil, err
	}
	if app == nil {
		return nil, unit.ErrUnauthenticatedKey
	}
	if err := usable(app); err != nil {
		return nil, err
	}
	return AppPrincipal(app), nil
}

// AppPrincipal is the principal a key of app authenticates as.
func AppPrincipal(app *ApplicationRecord) *Principal {
	return &Principal{
		TenantID:    app.TenantID,
		ActorID:     app.ID,
		ActorType:   unit.ActorApplication,
		ActorName:   app.Name,
		AppType:     app.Type,
		Permissions: app.Permissions,
		Rules:       SortedRules(app.Rules),

		RevealBudget: app.RevealBudget,
	}
}

// tenantUsable is nil unless tenant tid is being deleted (its deletion
// marker is stored, internal/tenants), which is Unauthenticated. The
// marker is read here by its key: internal/tenants imports this package.
func tenantUsable(t *unit.Tx, tid string) error {
	deleting, err := t.Has(barrier.Tenant(tid).Deleting())
	if err != nil {
		return err
	}
	if deleting {
		return unit.ErrUnauthenticatedKey
	}
	return nil
}
