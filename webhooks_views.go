package tokenvault

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
)

// The objects events carry (WebhookEventInfo.Data): each an API view of
// the entity with everything secret left out (docs/webhooks-events.md
// lists, per object, what is shown and what never is).
//
// A view never holds: token data, masks or detokenized values; an
// application's key or key hash; a proxy's key, configuration values,
// transform code, or the user information, query and fragment of its
// destination URL; a reactor's code or configuration values; a session's
// key, nonce or their hashes; an invitation's link token; a token
// intent's data, nor its card summary.
//
// Views are kept within maxViewBytes, so that an event with its envelope
// stays under events.MaxEventBytes: a view that would be bigger drops fields, in
// an order fixed per view, and names them in "omitted" (the receiver
// reads the object through the API for them).

// maxViewBytes bounds an event's object as JSON: events.MaxEventBytes less room
// for the envelope and the actor (an id, a name of at most 200
// characters, a trace id of at most maxTraceIDLength).
const maxViewBytes = events.MaxEventBytes - 4<<10

// viewDrop is a field a view may leave out, and how.
type viewDrop struct {
	name string
	drop func()
}

// fitView drops the fields of view, in order, while its JSON is over
// maxViewBytes, and returns the names of those it dropped.
func fitView(view any, drops []viewDrop) []string {
	var omitted []string
	for _, d := range drops {
		b, err := json.Marshal(view)
		if err == nil && len(b) <= maxViewBytes {
			break
		}
		d.drop()
		omitted = append(omitted, d.name)
	}
	return omitted
}

// tokenIntentEvent is a token intent as its events show it: its data is
// never shown, not even summarised.
type tokenIntentEvent struct {
	ID          string    `json:"id"`
	TenantID    string    `json:"tenant_id"`
	Type        string    `json:"type"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// TokenID is the token a token-intent.converted intent became.
	TokenID string `json:"token_id,omitempty"`
}

func tokenIntentEventView(rec *intents.Record, tokenID string) *tokenIntentEvent {
	return &tokenIntentEvent{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, Fingerprint: rec.Fingerprint,
		CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt, ExpiresAt: rec.ExpiresAt, TokenID: tokenID}
}

// applicationEvent is an application as its events show it: never its
// key. KeyFingerprint, in application.key.* events, tells keys apart.
type applicationEvent struct {
	ID          string          `json:"id"`
	TenantID    string          `json:"tenant_id"`
	Name        string          `json:"name"`
	Type        ApplicationType `json:"type"`
	Permissions []string        `json:"permissions"`
	Rules       []AccessRule    `json:"rules"`
	ExpiresAt   *time.Time      `json:"expires_at,omitempty"`
	CreatedBy   string          `json:"created_by,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	ModifiedBy  string          `json:"modified_by,omitempty"`
	ModifiedAt  *time.Time      `json:"modified_at,omitempty"`
	// KeyFingerprint identifies the key an application.key.created or
	// application.key.deleted event is about: 16 hex digits of a hash of
	// the key's keyed hash, the same in the created event of a key and
	// in its deleted one. It reveals nothing of the key.
	KeyFingerprint string   `json:"key_fingerprint,omitempty"`
	Omitted        []string `json:"omitted,omitempty"`
}

func applicationEventView(rec *access.ApplicationRecord) *applicationEvent {
	a := applicationOf(rec)
	e := &applicationEvent{ID: a.ID, TenantID: a.TenantID, Name: a.Name, Type: a.Type, Permissions: a.Permissions,
		Rules: a.Rules, ExpiresAt: a.ExpiresAt, CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt,
		ModifiedBy: a.ModifiedBy, ModifiedAt: a.ModifiedAt}
	if len(e.Rules) > 0 {
		e.Omitted = fitView(e, []viewDrop{{"rules", func() { e.Rules = nil }}})
	}
	return e
}

// applicationKeyEventView is the application with the fingerprint of
// the key whose keyed hash is keyHash.
func applicationKeyEventView(rec *access.ApplicationRecord, keyHash []byte) *applicationEvent {
	e := applicationEventView(rec)
	e.KeyFingerprint = keyFingerprint(keyHash)
	return e
}

// keyFingerprint is 16 hex digits of SHA-256 over a key's keyed hash
// (itself an HMAC under the Vault's system key): stable for a key,
// useless to find it.
func keyFingerprint(keyHash []byte) string {
	if len(keyHash) == 0 {
		return ""
	}
	h := sha256.Sum256(append([]byte("tokenvault key fingerprint\x00"), keyHash...))
	return hex.EncodeToString(h[:8])
}

// proxyEvent is a proxy as its events show it. Its key (which lets a
// caller invoke it, and without require_auth is all it takes), its
// configuration values (where proxies keep the destination's
// credentials), its transform code (which may embed them) and the user
// information, query and fragment of its destination URL are left out:
// the configuration's names and whether each transform is set remain.
type proxyEvent struct {
	ID                string     `json:"id"`
	TenantID          string     `json:"tenant_id"`
	Name              string     `json:"name"`
	DestinationURL    string     `json:"destination_url"`
	RequestTransform  bool       `json:"request_transform"`
	ResponseTransform bool       `json:"response_transform"`
	ApplicationID     string     `json:"application_id,omitempty"`
	ConfigurationKeys []string   `json:"configuration_keys,omitempty"`
	RequireAuth       bool       `json:"require_auth"`
	CreatedBy         string     `json:"created_by,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	ModifiedBy        string     `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time `json:"modified_at,omitempty"`
	Omitted           []string   `json:"omitted,omitempty"`
}

func proxyEventView(p *Proxy) *proxyEvent {
	e := &proxyEvent{ID: p.ID, TenantID: p.TenantID, Name: p.Name, DestinationURL: bareURL(p.DestinationURL),
		RequestTransform: p.RequestTransform != nil, ResponseTransform: p.ResponseTransform != nil,
		ConfigurationKeys: sortedKeys(p.Configuration), RequireAuth: p.RequireAuth,
		CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, ModifiedBy: p.ModifiedBy, ModifiedAt: p.ModifiedAt}
	if p.Application != nil {
		e.ApplicationID = p.Application.ID
	}
	if len(e.ConfigurationKeys) > 0 {
		e.Omitted = fitView(e, []viewDrop{{"configuration_keys", func() { e.ConfigurationKeys = nil }}})
	}
	return e
}

// bareURL is u without user information, query and fragment, which may
// hold credentials; "" for a URL that does not parse.
func bareURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// sortedKeys is the names of m, sorted.
func sortedKeys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// reactorEvent is a reactor as its events show it: its code and its
// configuration's values (a reactor's configuration is how it is given
// credentials for the services its code calls) are left out; the
// configuration's names and the formula's id and name remain.
type reactorEvent struct {
	ID                string     `json:"id"`
	TenantID          string     `json:"tenant_id"`
	Name              string     `json:"name"`
	FormulaID         string     `json:"formula_id,omitempty"`
	FormulaName       string     `json:"formula_name,omitempty"`
	ApplicationID     string     `json:"application_id,omitempty"`
	ConfigurationKeys []string   `json:"configuration_keys,omitempty"`
	CreatedBy         string     `json:"created_by,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	ModifiedBy        string     `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time `json:"modified_at,omitempty"`
	Omitted           []string   `json:"omitted,omitempty"`
}

func reactorEventView(r *Reactor) *reactorEvent {
	e := &reactorEvent{ID: r.ID, TenantID: r.TenantID, Name: r.Name, ConfigurationKeys: sortedKeys(r.Configuration),
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
	if r.Formula != nil {
		e.FormulaID, e.FormulaName = r.Formula.ID, r.Formula.Name
	}
	if r.Application != nil {
		e.ApplicationID = r.Application.ID
	}
	if len(e.ConfigurationKeys) > 0 {
		e.Omitted = fitView(e, []viewDrop{{"configuration_keys", func() { e.ConfigurationKeys = nil }}})
	}
	return e
}

// invocationEvent is a reactor invocation as reactor.invoked,
// reactor.completed and reactor.failed show it: never its arguments,
// its result, nor the message of the error it failed with (code may
// put detokenized values in either), only that error's status.
type invocationEvent struct {
	ID        string `json:"id"`
	ReactorID string `json:"reactor_id"`
	// Status is "invoked", "succeeded" or "failed".
	Status string `json:"status"`
	// ErrorStatus is the HTTP status of the problem a failed invocation
	// ended with (as in the callback's error.status).
	ErrorStatus int `json:"error_status,omitempty"`
}

// sessionEvent is a session as its events show it: never its key, its
// nonce, or their hashes.
type sessionEvent struct {
	ID            string     `json:"id"`
	TenantID      string     `json:"tenant_id"`
	ApplicationID string     `json:"application_id"`
	Authorized    bool       `json:"authorized"`
	AuthorizedBy  string     `json:"authorized_by,omitempty"`
	AuthorizedAt  *time.Time `json:"authorized_at,omitempty"`
	// Permissions are those the authorization granted, rules aside.
	Permissions []string  `json:"permissions,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func sessionEventView(r *sessions.Record) *sessionEvent {
	return &sessionEvent{ID: r.ID, TenantID: r.TenantID, ApplicationID: r.ApplicationID, Authorized: r.Authorized,
		AuthorizedBy: r.AuthorizedBy, AuthorizedAt: r.AuthorizedAt, Permissions: slices.Clone(r.Grants.Permissions),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
}

// invitationEventView is an invitation as its events show it: the API's
// Invitation, which holds no link token (only its keyed hash is stored,
// and the link is only ever sent to the invitee).
func invitationEventView(r *tenants.InvitationRecord) *Invitation {
	inv := invitationOf(r)
	return &inv
}

// memberEventView is a member as its events show it: the API's
// TenantMember, which holds nothing secret.
func memberEventView(m *TenantMember) *TenantMember {
	c := *m
	return &c
}
