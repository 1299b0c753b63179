package tokenvault

import (
	"context"
	"crypto/subtle"
	"maps"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Session lifetimes.
const (
	// SessionLifetime is how long a session lives when its authorizer
	// gives no expires_at, counted from its creation.
	SessionLifetime = 3 * time.Minute
	// MaxSessionLifetime bounds the expires_at an authorizer may give,
	// counted from the authorization: sessions serve one browser or mobile
	// flow, so a longer-lived credential should be an application.
	MaxSessionLifetime = time.Hour
)

// Session is what CreateSession returns. SessionKey and Nonce are shown only
// this once; the Vault stores keyed hashes of them.
type Session struct {
	SessionKey Credential `json:"session_key"`
	Nonce      string     `json:"nonce"`
	ExpiresAt  time.Time  `json:"expires_at"`
}

// AuthorizeSessionRequest is the body of AuthorizeSession.
type AuthorizeSessionRequest struct {
	// Nonce is the one the session was created with. Required.
	Nonce string `json:"nonce"`
	// Permissions and Rules are what the session may do; one of them must
	// be non-empty. Rules are scoped by Conditions, never by Container.
	Permissions []string     `json:"permissions"`
	Rules       []AccessRule `json:"rules"`
	// ExpiresAt, when set, replaces the session's expiry: in the future and
	// at most MaxSessionLifetime after the authorization.
	ExpiresAt *time.Time `json:"expires_at"`
}

// sessionKeyPrefix starts every session key, so it cannot be mistaken for an
// application key in a log or a secret scanner's report.
const sessionKeyPrefix = "ses_"

func newSessionKey() string { return sessionKeyPrefix + unit.NewAPIKey()[len(unit.APIKeyPrefix):] }

// newNonce returns a fresh nonce with 256 bits of entropy.
func newNonce() string { return unit.NewAPIKey()[len(unit.APIKeyPrefix):] }

// nonceMAC separates the nonce namespace from the key namespace.
func (t *txn) nonceMAC(nonce string) []byte {
	return t.v.sys.MAC([]byte("nonce\x00"), []byte(nonce))
}

// CreateSession creates a session for a browser or mobile flow and returns
// its key and nonce. It needs the key of a public application and no
// permission; any other key is PermissionDenied. The session key is refused
// everywhere (PermissionDenied) until a private application authorizes the
// nonce with AuthorizeSession; the session expires SessionLifetime after
// creation unless the authorization says otherwise.
//
// One public application creates at most Options.Limits.SessionsPerApplication
// sessions a second from one client address (a burst of
// SessionBurstSeconds' worth; past it the call is RateLimited). Sessions
// not yet authorized are capped per application and address
// (Options.Limits.MaxPendingSessionsPerAddress) and per application
// (Options.Limits.MaxPendingSessionsPerApplication): a creation past its
// address's cap evicts that address's own oldest waiting session, so a
// flood from one holder of the public key never stops other users; a
// creation past the application's ceiling is refused (RateLimited, with
// RetryAfter until the oldest waiting session expires), never made by
// evicting another address's session (see sessions_limits.go).
//
// Returns Unauthenticated, PermissionDenied, RateLimited (the rate, or the
// application's ceiling of waiting sessions).
func (v *Vault) CreateSession(ctx context.Context, key Credential) (*Session, error) {
	sessionKey, nonce := newSessionKey(), newNonce()
	var out *Session
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		if p.ActorType != ActorApplication || p.AppType != Public {
			return unit.Errorf(PermissionDenied, "sessions are created with the key of a public application")
		}
		if err := t.chargeSession(p.ActorID); err != nil {
			return err
		}
		addr := t.pendingAddress()
		if err := t.makeRoomForSession(p.TenantID, p.ActorID, addr); err != nil {
			return err
		}
		rec := &sessions.Record{
			ID:             t.v.ids.Next(t.Now),
			TenantID:       p.TenantID,
			ApplicationID:  p.ActorID,
			PendingAddress: addr,
			KeyHash:        t.v.sys.MAC([]byte(sessionKey)),
			NonceHash:      t.nonceMAC(nonce),
			CreatedAt:      t.Now,
			ExpiresAt:      t.Now.Add(SessionLifetime),
		}
		ref := access.KeyRef{TenantID: rec.TenantID, Kind: EntitySession, ID: rec.ID}
		for _, w := range []struct {
			key barrier.Key
			v   recordCodec
		}{
			{barrier.Tenant(rec.TenantID).Record(EntitySession, rec.ID), rec},
			{barrier.APIKeyLookup(rec.KeyHash), &ref},
			{barrier.NonceLookup(rec.NonceHash), &ref},
		} {
			if err := t.PutRecord(w.key, w.v); err != nil {
				return err
			}
		}
		if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, EntitySession, rec.ID)); err != nil {
			return err
		}
		for _, k := range rec.PendingKeys() {
			if err := t.PutIndex(k); err != nil {
				return err
			}
		}
		out = &Session{SessionKey: Credential(sessionKey), Nonce: nonce, ExpiresAt: rec.ExpiresAt}
		if err := t.emitSession(EventSessionCreated, p.Actor(), rec); err != nil {
			return err
		}
		return t.Log(p.Actor(), rec.TenantID, EntitySession, rec.ID, OpCreate, "Session created")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errUnknownNonce answers every nonce that cannot be used, whatever the
// reason (never issued, used, expired, another tenant's), so an authorizer
// learns nothing about other sessions.
var errUnknownNonce = unit.InvalidField("nonce", "is unknown, already used or expired")

// AuthorizeSession gives the session created with req.Nonce its
// permissions and rules. It needs the key of a private application, which
// must itself hold every permission it grants (directly or in a rule); the
// session is then also held to the authorizer's own grants as they were at
// this moment and as they are when it is used, so it never reaches a token
// the authorizer could not, nor sees more of it. The session works only
// while both the application that created it and its authorizer exist
// and have not expired. The nonce works once.
//
// Returns Invalid (nonce unknown, used, expired or another tenant's; bad
// grants; bad expires_at), Unauthenticated, PermissionDenied.
func (v *Vault) AuthorizeSession(ctx context.Context, key Credential, req AuthorizeSessionRequest) error {
	fe := unit.FieldErrors{}
	if req.Nonce == "" {
		fe.Add("nonce", "is required")
	}
	perms, rules := normalizeGrants(req.Permissions, req.Rules)
	validateSessionGrants(perms, rules, fe)
	return v.update(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		if p.ActorType != ActorApplication || p.AppType != Private {
			return unit.Errorf(PermissionDenied, "sessions are authorized with the key of a private application")
		}
		fe := maps.Clone(fe)
		if at := req.ExpiresAt; at != nil {
			switch {
			case !at.After(t.Now):
				fe.Add("expires_at", "must be in the future")
			case at.Sub(t.Now) > MaxSessionLifetime:
				fe.Add("expires_at", "must be at most %s from now", MaxSessionLifetime)
			}
		}
		if err := fe.Err(); err != nil {
			return err
		}
		for _, perm := range grantedPermissions(perms, rules) {
			if !p.Has(perm) {
				return unit.Errorf(PermissionDenied, "the authorizing key lacks %s: a session gets no more than its authorizer holds", perm)
			}
		}
		rec, err := t.sessionByNonce(p.TenantID, req.Nonce)
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
		rec.Grants = grants{Permissions: perms, Rules: rules}
		rec.Ceiling = grants{Permissions: p.Permissions, Rules: p.Rules}
		if req.ExpiresAt != nil {
			if err := t.Delete(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, EntitySession, rec.ID)); err != nil {
				return err
			}
			rec.ExpiresAt = req.ExpiresAt.UTC()
			if err := t.PutIndex(barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, EntitySession, rec.ID)); err != nil {
				return err
			}
		}
		if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(EntitySession, rec.ID), rec); err != nil {
			return err
		}
		if err := t.emitSession(EventSessionAuthorized, p.Actor(), rec); err != nil {
			return err
		}
		return t.Log(p.Actor(), rec.TenantID, EntitySession, rec.ID, OpUpdate, "Session authorized")
	})
}

// grantedPermissions lists every permission in perms and rules.
func grantedPermissions(perms []string, rules []AccessRule) []string {
	out := slices.Clone(perms)
	for _, r := range rules {
		out = append(out, r.Permissions...)
	}
	return out
}

// sessionByNonce finds the unexpired, unauthorized session of tenant tid
// that nonce was issued for.
func (t *txn) sessionByNonce(tid, nonce string) (*sessions.Record, error) {
	if len(nonce) > maxKeyLength {
		return nil, errUnknownNonce
	}
	mac := t.nonceMAC(nonce)
	var ref access.KeyRef
	ok, err := t.GetRecord(barrier.NonceLookup(mac), &ref)
	if err != nil {
		return nil, err
	}
	if !ok || ref.TenantID != tid || ref.Kind != EntitySession {
		return nil, errUnknownNonce
	}
	rec, err := t.loadSession(ref.TenantID, ref.ID)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Authorized || subtle.ConstantTimeCompare(rec.NonceHash, mac) != 1 {
		return nil, errUnknownNonce
	}
	return rec, nil
}

// loadSession returns the session, or nil if it does not exist or has
// expired.
func (t *txn) loadSession(tid, id string) (*sessions.Record, error) {
	var rec sessions.Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntitySession, id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	if rec.Expired(t.Now) {
		return nil, nil
	}
	return &rec, nil
}

// sessionPrincipal authenticates a session key found in the key lookup.
func (t *txn) sessionPrincipal(ref access.KeyRef, mac []byte) (*principal, time.Time, error) {
	rec, err := t.loadSession(ref.TenantID, ref.ID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if rec == nil || subtle.ConstantTimeCompare(rec.KeyHash, mac) != 1 {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	// A session lives on its applications' authority: when the public
	// application that created it or the private one that authorized it
	// is deleted or expires, the session stops working with it, and it
	// never does more than its authorizer may do now.
	creator, err := t.loadApplication(rec.TenantID, rec.ApplicationID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if creator == nil {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	if !rec.Authorized {
		return nil, time.Time{}, unit.Errorf(PermissionDenied, "the session has not been authorized")
	}
	authorizer, err := t.loadApplication(rec.TenantID, rec.AuthorizedBy)
	if err != nil {
		return nil, time.Time{}, err
	}
	if authorizer == nil {
		return nil, time.Time{}, unit.ErrUnauthenticatedKey
	}
	expires := rec.ExpiresAt
	for _, app := range []*access.ApplicationRecord{creator, authorizer} {
		if app.ExpiresAt != nil && app.ExpiresAt.Before(expires) {
			expires = *app.ExpiresAt
		}
	}
	return &principal{
		TenantID:    rec.TenantID,
		ActorID:     rec.ID,
		ActorType:   ActorSession,
		AppID:       rec.AuthorizedBy,
		Permissions: rec.Grants.Permissions,
		Rules:       sortedRules(rec.Grants.Rules),
		Ceilings: []grants{
			{Permissions: rec.Ceiling.Permissions, Rules: sortedRules(rec.Ceiling.Rules)},
			{Permissions: authorizer.Permissions, Rules: sortedRules(authorizer.Rules)},
		},
	}, expires, nil
}

// deleteSession removes a session and its lookups.
func (t *txn) deleteSession(by actor, rec *sessions.Record, msg string) error {
	keys := []barrier.Key{
		barrier.Tenant(rec.TenantID).Record(EntitySession, rec.ID),
		barrier.APIKeyLookup(rec.KeyHash),
		barrier.Tenant(rec.TenantID).Expiry(rec.ExpiresAt, EntitySession, rec.ID),
		// Its events' sequence counter: no event ends a session.
		barrier.Tenant(rec.TenantID).EventSequence(EntitySession, rec.ID),
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
	return t.Log(by, rec.TenantID, EntitySession, rec.ID, OpDelete, msg)
}
