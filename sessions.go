package tokenvault

import (
	"context"
	"maps"
	"time"

	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Sessions: keys a public application creates for one user of a browser
// or mobile flow, which a private application authorizes with grants.
// This file is the feature's page of the facade: the Vault methods
// authenticate, check the application's type, and delegate to
// internal/sessions, which owns the session (its record, caps, nonce,
// authority and events).

// Session lifetimes.
const (
	// SessionLifetime is how long a session lives when its authorizer
	// gives no expires_at, counted from its creation.
	SessionLifetime = sessions.Lifetime
	// MaxSessionLifetime bounds the expires_at an authorizer may give,
	// counted from the authorization: sessions serve one browser or mobile
	// flow, so a longer-lived credential should be an application.
	MaxSessionLifetime = sessions.MaxLifetime
)

// Defaults of the pending-session caps (internal/sessions, limits.go).
const (
	// DefaultMaxPendingSessions is Options.Limits.MaxPendingSessionsPerApplication's
	// zero value: the live sessions one public application may have waiting
	// for authorization; past it new ones are refused (RateLimited), none
	// evicted.
	DefaultMaxPendingSessions = sessions.DefaultMax
	// DefaultMaxPendingSessionsPerAddress is
	// Options.Limits.MaxPendingSessionsPerAddress's zero value: the live sessions
	// of one public application created from one client address that may
	// wait for authorization before that address's oldest is evicted.
	DefaultMaxPendingSessionsPerAddress = sessions.DefaultMaxPerAddress
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
// evicting another address's session (internal/sessions, limits.go).
//
// Returns Unauthenticated, PermissionDenied, RateLimited (the rate, or the
// application's ceiling of waiting sessions).
func (v *Vault) CreateSession(ctx context.Context, key Credential) (*Session, error) {
	sessionKey, nonce := sessions.NewKey()
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
		rec, err := t.v.sessions.Create(t.Tx, p, sessionKey, nonce)
		if err != nil {
			return err
		}
		out = &Session{SessionKey: Credential(sessionKey), Nonce: nonce, ExpiresAt: rec.ExpiresAt}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

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
		if req.ExpiresAt != nil {
			sessions.CheckExpiry(*req.ExpiresAt, t.Now, fe)
		}
		if err := fe.Err(); err != nil {
			return err
		}
		return t.v.sessions.Authorize(t.Tx, p, req.Nonce, grants{Permissions: perms, Rules: rules}, req.ExpiresAt)
	})
}
