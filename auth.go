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

// authCache remembers the principals of keys seen recently, so the hot
// path (a key used again and again) reads nothing from the store to
// authenticate.
//
// It keeps the spec's promise that a regenerated, deleted or expired key is
// refused at once, by every Vault on the store: each entry carries the
// generation under which it was read, and is served only in a transaction
// that sees the same generation, so no entry outlives a change to what it
// was read from. Every transaction that writes an API key lookup, an
// application or a session (or marks a tenant deleted) sets
// its barrier.Tx as auth-changed: their key constructors mark them
// (internal/barrier), so no key is parsed to tell. A transaction that
// changes a webhook marks itself too (events.Forget): the Vault caches
// each tenant's webhook subscriptions under the same generation
// (internal/events, subscriptions_read.go), so a webhook change voids the key entries
// as well, and a key change the subscriptions; both are rare beside the
// calls the caches serve. The generation is kept in one of two ways:
//
//   - On a store that several processes share and that keeps a generation
//     counter for them ([store.Generation], PostgreSQL), the counter is the
//     store's. A transaction that changed a key advances it in its own
//     commit (advanceAuthGeneration), and every transaction reads it as of
//     its snapshot, in the round trip that opens it. An entry is stored
//     under the generation of the transaction that read the principal and
//     served only to a transaction reading the same one. So once the call
//     that revoked a key has returned, every Vault's next transaction reads
//     a newer generation and misses. A transaction that has advanced the
//     counter (or shares its database transaction with an Update that has)
//     neither serves nor stores entries: what it reads is not committed
//     yet. Other changes a store makes do not touch the counter, so the
//     cache survives the traffic of tokens and logs; the price is a read of
//     one row per transaction, sent with BEGIN.
//   - On a store that one process holds exclusively (store.SingleProcess:
//     memory, and bbolt, whose file is locked by its opener; the cache's
//     SingleProcess), the counter is the cache's own (Generation), in
//     memory. After a transaction that changed a key commits, it moves on
//     (Invalidate); an entry is stored with the generation read before
//     its transaction began (bbolt takes a read snapshot when View
//     begins, before any of the Vault's code runs, so a generation read
//     later could postdate the snapshot and bless a key revoked in
//     between), and served while it has not moved.
//
// On other stores (shared, without a counter) there is no cache: every
// call reads its key from the store. Either way an entry carries its key's
// expiry and is not served from then on (the first lookup at or after it
// drops it).
//
// The cache itself (its entries, least recently used first out, and the
// single-process generation) is access.AuthCache; the root decides, per
// transaction, which generation it serves and keeps under
// (authCacheGens).
type authCache = access.AuthCache[*principal]

// authCacheGens returns the generation an entry must carry to be served in
// t, and the one under which a principal t reads is kept; ok is false
// when t may not use the cache.
func (t *txn) authCacheGens() (serve, keep uint64, ok bool, err error) {
	if gen, advanced, shared, err := t.SharedGeneration(); shared {
		if err != nil || advanced {
			return 0, 0, false, err
		}
		return gen, gen, true, nil
	}
	if !t.v.auth.SingleProcess() {
		return 0, 0, false, nil
	}
	return t.v.auth.Generation(), t.AuthGen, true, nil
}

// advanceAuthGeneration advances the store's generation in t's own commit
// when t changed what a key authenticates as, on a store that keeps one:
// the Vault calls it after a transaction's function has succeeded.
func advanceAuthGeneration(t *unit.Tx) error {
	if !t.AuthChanged() {
		return nil
	}
	return t.AdvanceSharedGeneration()
}
