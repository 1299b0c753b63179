package sessions

import (
	"crypto/subtle"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Session lifetimes.
const (
	// Lifetime is how long a session lives when its authorizer gives no
	// expires_at, counted from its creation.
	Lifetime = 3 * time.Minute
	// MaxLifetime bounds the expires_at an authorizer may give, counted
	// from the authorization: sessions serve one browser or mobile flow,
	// so a longer-lived credential should be an application.
	MaxLifetime = time.Hour
)

// Service is the sessions of one Vault: what it needs of the Vault, set
// when the Vault opens, and the operations, each in the caller's unit of
// work (a *unit.Tx). The caller authenticates the key and checks its
// application's type (public to create, private to authorize).
type Service struct {
	// IDs makes the ids of new sessions.
	IDs *unit.IDSource
	// Sys is the Vault's system keyring: session keys, nonces and client
	// addresses are stored and looked up by their keyed MACs.
	Sys *barrier.Keys
	// MaxPerAddress and Max are the caps on sessions waiting for
	// authorization per application and address, and per application
	// (limits.go); 0 or less: no cap.
	MaxPerAddress, Max int
	// Application returns the live application id of tenant tid, or nil
	// if it does not exist or has expired: a session lives on the
	// authority of the application that created it and of the one that
	// authorized it.
	Application func(t *unit.Tx, tid, id string) (*access.ApplicationRecord, error)
}

// keyPrefix starts every session key, so it cannot be mistaken for an
// application key in a log or a secret scanner's report.
const keyPrefix = "ses_"

// NewKey returns a fresh session key and a fresh nonce, each with 256
// bits of entropy.
func NewKey() (key, nonce string) {
	key = keyPrefix + unit.NewAPIKey()[len(unit.APIKeyPrefix):]
	return key, unit.NewAPIKey()[len(unit.APIKeyPrefix):]
}

// nonceMAC separates the nonce namespace from the key namespace.
func (s *Service) nonceMAC(nonce string) []byte {
	return s.Sys.MAC([]byte("nonce\x00"), []byte(nonce))
}

// Create stores a session of the public application p, waiting for
// authorization, whose key is key and nonce nonce (NewKey): only their
// keyed MACs are kept. It makes room for it under the caps first
// (RateLimited at the application's ceiling), emits session.created and
// logs the creation.
func (s *Service) Create(t *unit.Tx, p *access.Principal, key, nonce string) (*Record, error) {
	addr := ratelimit.PendingAddress(s.Sys, unit.CallOf(t.Ctx).ClientAddress)
	if err := s.makeRoom(t, p.TenantID, p.ActorID, addr); err != nil {
		return nil, err
	}
	rec := &Record{
		ID:             s.IDs.Next(t.Now),
		TenantID:       p.TenantID,
		ApplicationID:  p.ActorID,
		PendingAddress: addr,
		KeyHash:        s.Sys.MAC([]byte(key)),
		NonceHash:      s.nonceMAC(nonce),
		CreatedAt:      t.Now,
		ExpiresAt:      t.Now.Add(Lifetime),
	}
	ref := access.KeyRef{TenantID: rec.TenantID, Kind: unit.EntitySession, ID: rec.ID}
	for _, w := range []struct {
		key barrier.Key
		v   unit.Record
	}{
		{barrier.Tenant(rec.TenantID).Record(unit.EntitySession, rec.ID), rec},
		{barrier.APIKeyLookup(rec.KeyHash), &ref},
		{barrier.NonceLookup(rec.NonceHash), &ref},
	} {
		if err := t.PutRecord(w.key, w.v); err != nil {
			return nil, err
		}
	}
	if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntitySession, rec.ID)); err != nil {
		return nil, err
	}
	for _, k := range rec.PendingKeys() {
		if err := t.PutIndex(k); err != nil {
			return nil, err
		}
	}
	if err := emit(t, events.SessionCreated, p.Actor(), rec); err != nil {
		return nil, err
	}
	return rec, t.Log(p.Actor(), rec.TenantID, unit.EntitySession, rec.ID, unit.OpCreate, "Session created")
}

// errUnknownNonce answers every nonce that cannot be used, whatever the
// reason (never issued, used, expired, another tenant's), so an authorizer
// learns nothing about other sessions.
var errUnknownNonce = unit.InvalidField("nonce", "is unknown, already used or expired")

// CheckExpiry checks the expires_at an authorization gives, at now: in
// the future and at most MaxLifetime from now, the problems added to fe
// at "expires_at".
func CheckExpiry(at, now time.Time, fe unit.FieldErrors) {
	switch {
	case !at.After(now):
		fe.Add("expires_at", "must be in the future")
	case at.Sub(now) > MaxLifetime:
		fe.Add("expires_at", "must be at most %s from now", MaxLifetime)
	}
}

// Authorize gives the session of p's tenant created with nonce the
// grants g, p being the private application that authorizes it (checked
// by the caller), and expiresAt, when set, as its expiry (CheckExpiry
// checked it). p must hold every permission it grants; the session is
// also held to p's own grants as they are now (its ceiling). The nonce
// works once. It emits session.authorized and logs the authorization.
//
// Returns PermissionDenied (p lacks a permission it grants), Invalid at
// "nonce" (unknown, used, expired or another tenant's).
func (s *Service) Authorize(t *unit.Tx, p *access.Principal, nonce string, g access.Grants, expiresAt *time.Time) error {
	for _, perm := range grantedPermissions(g) {
		if !p.Has(perm) {
			return unit.Errorf(unit.PermissionDenied, "the authorizing key lacks %s: a session gets no more than its authorizer holds", perm)
		}
	}
	rec, err := s.byNonce(t, p.TenantID, nonce)
	if err != nil {
		return err
	}
	if err := t.Delete(barrier.NonceLookup(rec.NonceHash)); err != nil {
		return err
	}
	for _, k := range rec.PendingKeys() {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	now := t.Now
	rec.NonceHash = nil
	rec.Authorized, rec.AuthorizedBy, rec.AuthorizedAt = true, p.ActorID, &now
	rec.Grants = g
	rec.Ceiling = access.Grants{Permissions: p.Permissions, Rules: p.Rules}
	if expiresAt != nil {
		if err := t.Delete(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntitySession, rec.ID)); err != nil {
			return err
		}
		rec.ExpiresAt = expiresAt.UTC()
		if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntitySession, rec.ID)); err != nil {
			return err
		}
	}
	if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntitySession, rec.ID), rec); err != nil {
		return err
	}
	if err := emit(t, events.SessionAuthorized, p.Actor(), rec); err != nil {
		return err
	}
	return t.Log(p.Actor(), rec.TenantID, unit.EntitySession, rec.ID, unit.OpUpdate, "Session authorized")
}

// grantedPermissions lists every permission in g, its rules' included.
func grantedPermissions(g access.Grants) []string {
	out := slices.Clone(g.Permissions)
	for _, r := range g.Rules {
		out = append(out, r.Permissions...)
	}
	return out
}

// maxNonceLength bounds the work an absurd nonce can cause, as the
// Vault bounds a key's length.
const maxNonceLength = 256

// byNonce finds the unexpired, unauthorized session of tenant tid that
// nonce was issued for.
func (s *Service) byNonce(t *unit.Tx, tid, nonce string) (*Record, error) {
	if len(nonce) > maxNonceLength {
		return nil, errUnknownNonce
	}
	mac := s.nonceMAC(nonce)
	var ref access.KeyRef
	ok, err := t.GetRecord(barrier.NonceLookup(mac), &ref)
	if err != nil {
		return nil, err
	}
	if !ok || ref.TenantID != tid || ref.Kind != unit.EntitySession {
		return nil, errUnknownNonce
	}
	rec, err := load(t, ref.TenantID, ref.ID)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Authorized || subtle.ConstantTimeCompare(rec.NonceHash, mac) != 1 {
		return nil, errUnknownNonce
	}
	return rec, nil
}

// load returns the session, or nil if it does not exist or has expired.
func load(t *unit.Tx, tid, id string) (*Record, error) {
	var rec Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntitySession, id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	if rec.Expired(t.Now) {
		return nil, nil
	}
	return &rec, nil
}

// Principal authenticates a session key found in the key lookup (ref),
// whose keyed MAC is mac: the principal it acts as, and when it stops
// working (its own expiry, or its applications' if sooner).
//
// A session lives on its applications' authority: when the public
// application that created it or the private one that authorized it is
// deleted or expires, the session stops working with it, and it never
// does more than its authorizer may do now (the authorizer's grants are
// one of its ceilings).
//
// Returns Unauthenticated (no such live session, or an application gone),
// PermissionDenied (not yet authorized).
func (s *Service) Principal(t *unit.Tx, ref access.KeyRef, mac []byte) (*access.Principal, time.Time, error) {
	rec, err := load(t, ref.TenantID, ref.ID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if rec == nil || subtle.ConstantTimeCompare(rec.KeyHash, mac) != 1 {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	creator, err := s.Application(t, rec.TenantID, rec.ApplicationID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if creator == nil {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	if !rec.Authorized {
		return nil, time.Time{}, unit.Errorf(unit.PermissionDenied, "the session has not been authorized")
	}
	authorizer, err := s.Application(t, rec.TenantID, rec.AuthorizedBy)
	if err != nil {
		return nil, time.Time{}, err
	}
	if authorizer == nil {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	// A session acts through its creator and its authorizer: either
	// frozen by the circuit breaker freezes it too.
	for _, app := range []*access.ApplicationRecord{creator, authorizer} {
		if err := access.CheckUsable(app); err != nil {
			return nil, time.Time{}, err
		}
	}
	expires := rec.ExpiresAt
	for _, app := range []*access.ApplicationRecord{creator, authorizer} {
		if app.ExpiresAt != nil && app.ExpiresAt.Before(expires) {
			expires = *app.ExpiresAt
		}
	}
	return &access.Principal{
		TenantID:    rec.TenantID,
		ActorID:     rec.ID,
		ActorType:   unit.ActorSession,
		AppID:       rec.AuthorizedBy,
		Permissions: rec.Grants.Permissions,
		Rules:       access.SortedRules(rec.Grants.Rules),
		Ceilings: []access.Grants{
			{Permissions: rec.Ceiling.Permissions, Rules: access.SortedRules(rec.Ceiling.Rules)},
			{Permissions: authorizer.Permissions, Rules: access.SortedRules(authorizer.Rules)},
		},
		RevealBudget: authorizer.RevealBudget,
	}, expires, nil
}

// Delete removes a session and its lookups, with the log line (delete,
// msg): an expiry (the sweeper) or an eviction (a cap).
func Delete(t *unit.Tx, by unit.Actor, rec *Record, msg string) error {
	keys := []barrier.Key{
		barrier.Tenant(rec.TenantID).Record(unit.EntitySession, rec.ID),
		barrier.APIKeyLookup(rec.KeyHash),
		barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, unit.EntitySession, rec.ID),
		// Its events' sequence counter: no event ends a session.
		barrier.Tenant(rec.TenantID).EventSequence(unit.EntitySession, rec.ID),
	}
	if rec.NonceHash != nil {
		keys = append(keys, barrier.NonceLookup(rec.NonceHash))
		keys = append(keys, rec.PendingKeys()...)
	}
	for _, k := range keys {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return t.Log(by, rec.TenantID, unit.EntitySession, rec.ID, unit.OpDelete, msg)
}
