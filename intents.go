package tokenvault

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Token intents.
//
// A token intent holds data a public key collected (a card typed into a
// browser, say) sealed for a short while, until a private key turns it
// into a token or it expires. Its id is what the browser hands its
// backend: the backend's private key converts it (CreateToken or a token
// request in Tokenize with TokenIntentID), so the token's containers,
// metadata, expressions and expiry are the backend's choice, not the
// browser's. An intent never returns its data; for a card it returns the
// card's summary (bin, last four, expiration, brand), and, to a key that
// may read tokens of its type where they go by default, the fingerprint a
// token of its data gets under the type's default fingerprint expression,
// so a backend can tell a card it already holds. A key that may not read
// such tokens (every public key) never gets an intent's fingerprint: it
// would be a fingerprint of any value it chooses, which matched against a
// stored token's tells the value (a card's 1,000 Luhn-valid middles
// between a BIN and last four a mask shows are tried in a second).
//
// Who may do what (decided here; docs/internals.md, "Token intents"):
//
//   - create: a key holding token-intent:create, which every public
//     application holds by default (it exists to collect data), and a
//     private application or a session may be granted;
//   - read (GetTokenIntent) and delete: the application or session that
//     created the intent, and keys holding token-intent:read or
//     token-intent:delete (private applications only);
//   - convert: a private application's key (the backend's), holding
//     token:create on the token's containers; a public key or a session
//     is PermissionDenied. Converting deletes the intent in the
//     transaction that creates the token, so an intent converts once.
//
// Every operation is an audit line (entity type token_intent): created,
// read, deleted, converted, expired.

// Token intent lifetimes.
const (
	// DefaultTokenIntentLifetime is how long an intent lives when its
	// request gives no expires_at and Options.Retention.TokenIntent is
	// zero.
	DefaultTokenIntentLifetime = 24 * time.Hour
	// MaxTokenIntentLifetime bounds an intent's expires_at, counted from
	// its creation, and Options.Retention.TokenIntent.
	MaxTokenIntentLifetime = 48 * time.Hour
)

// Token intent permissions (see PermissionsFor).
const (
	PermTokenIntentCreate = access.PermTokenIntentCreate
	PermTokenIntentRead   = access.PermTokenIntentRead
	PermTokenIntentDelete = access.PermTokenIntentDelete
)

// TokenIntentRequest is the body of CreateTokenIntent.
type TokenIntentRequest struct {
	// Type is token, card or bank; Data is validated as for a token of
	// that type (a card's number, expiration and optional cvc).
	Type string `json:"type"`
	Data any    `json:"data"`
	// ExpiresAt, when set, is when the intent expires: in the future and
	// at most MaxTokenIntentLifetime from now. Nil: after
	// Options.Retention.TokenIntent (one day by default).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// TokenIntent is a token intent as returned: never its data.
type TokenIntent struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Type     string `json:"type"`
	// Card summarises a card's data; nil for other types.
	Card *CardDetails `json:"card,omitempty"`
	// Fingerprint is the fingerprint a token of this data gets under its
	// type's default fingerprint expression, shown only to a key that reads
	// tokens of the type in clear in its default container (token:read
	// there with the reveal transform): never to a public key, nor to any
	// key that may not read such tokens or reads them masked or redacted,
	// which could match the fingerprint of a value of its choice against a
	// stored token's.
	Fingerprint string    `json:"fingerprint,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// CardDetails is what a token intent tells of a card: no more than PCI
// DSS allows to be displayed (the BIN and the last four digits).
type CardDetails struct {
	// Bin is the first 6 digits, or 8 for a number of 16 digits or more.
	Bin   string `json:"bin"`
	Last4 string `json:"last4"`
	// ExpirationMonth and ExpirationYear are the card's.
	ExpirationMonth int `json:"expiration_month"`
	ExpirationYear  int `json:"expiration_year"`
	// Brand is the card network by the number's prefix (CardBrand).
	Brand string `json:"brand"`
}

// CreateTokenIntent stores req's data sealed until it is converted,
// deleted or expires, and returns the intent without its data. It needs
// token-intent:create, which every public application holds by default.
// A card must not have expired; its cvc is validated but not kept (no
// conversion carries it over).
//
// The live intents of one application or session are capped per client
// address (Options.Limits.MaxPendingTokenIntentsPerAddress): a creation
// past it evicts that address's own oldest live intent, so a flood from
// one address only replaces its own. In all they are capped by
// Options.Limits.MaxPendingTokenIntentsPerApplication: a creation past it
// is refused (RateLimited, RetryAfter the time until the oldest expires),
// so no caller's pending intent is evicted by another's (see
// intents_limits.go).
//
// Returns Invalid (bad type, data or expires_at, with their paths),
// Unauthenticated, PermissionDenied, RateLimited, StorageFull, Internal.
func (v *Vault) CreateTokenIntent(ctx context.Context, key Credential, req TokenIntentRequest) (*TokenIntent, error) {
	return v.createTokenIntentAs(ctx, keyCredential(key), req)
}

func (v *Vault) createTokenIntentAs(ctx context.Context, c credential, req TokenIntentRequest) (*TokenIntent, error) {
	if err := checkGoText(req, ""); err != nil {
		return nil, err
	}
	now := v.now()
	fe := unit.FieldErrors{}
	pt := prepareToken(TokenRequest{Type: req.Type, Data: req.Data}, now, now, "", fe)
	if at := req.ExpiresAt; at != nil {
		unit.CheckExpiry(*at, now, "expires_at", fe)
		if at.Sub(now) > MaxTokenIntentLifetime {
			fe.Add("expires_at", "must be at most %s from now", MaxTokenIntentLifetime)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// A card's cvc is validated, not kept: nothing reads it (a conversion
	// never carries it over), and an intent lives up to 48 hours, past
	// Options.Retention.CVC.
	data, err := json.Marshal(exprData(pt.typ, pt.data))
	if err != nil {
		return nil, err
	}
	var out *TokenIntent
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authenticateAs(c)
		if err != nil {
			return err
		}
		if !p.MayCreateIntent() {
			return unit.Forbidden(PermTokenIntentCreate)
		}
		ks, err := t.TenantKeys(p.TenantID, false)
		if err != nil {
			return err
		}
		addr := t.pendingAddress()
		if err := t.makeRoomForIntent(p.TenantID, p.ActorID, addr); err != nil {
			return err
		}
		rec := &intents.Record{
			ID: t.v.ids.Next(t.Now), TenantID: p.TenantID, Type: pt.typ, Data: data,
			Fingerprint: pt.fingerprint(ks), CreatedBy: p.ActorID, CreatedByType: p.ActorType,
			CreatedAt: t.Now, ExpiresAt: t.Now.Add(t.v.intentLifetime), CreatedFrom: addr,
		}
		if req.ExpiresAt != nil {
			rec.ExpiresAt = req.ExpiresAt.UTC()
		}
		if err := t.PutRecord(barrier.Tenant(rec.TenantID).TokenIntent(rec.ID), rec); err != nil {
			return err
		}
		for _, k := range append(rec.IndexKeys(), barrier.Tenant(rec.TenantID).TokenIntentExpiry(rec.ExpiresAt, rec.ID)) {
			if err := t.PutIndex(k); err != nil {
				return err
			}
		}
		if out, err = intentOf(rec, maySeeIntentFingerprint(p, rec.Type)); err != nil {
			return err
		}
		if err := t.emitIntent(EventTokenIntentCreated, p.Actor(), rec, ""); err != nil {
			return err
		}
		return t.Log(p.Actor(), rec.TenantID, EntityTokenIntent, rec.ID, OpCreate, "Token intent created")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetTokenIntent returns the intent id of the key's tenant, without its
// data. The key must be the one of the application or session that
// created it, or hold token-intent:read. An intent that does not exist,
// has expired, was converted or deleted, or is another tenant's is
// NotFound, the same for every reason.
//
// Returns NotFound, Unauthenticated, PermissionDenied, RateLimited,
// Internal.
func (v *Vault) GetTokenIntent(ctx context.Context, key Credential, id string) (*TokenIntent, error) {
	return v.getTokenIntentAs(ctx, keyCredential(key), id)
}

func (v *Vault) getTokenIntentAs(ctx context.Context, c credential, id string) (*TokenIntent, error) {
	var out *TokenIntent
	err := v.update(ctx, func(t *txn) error {
		p, rec, err := t.ownIntent(c, id, PermTokenIntentRead)
		if err != nil {
			return err
		}
		if out, err = intentOf(rec, maySeeIntentFingerprint(p, rec.Type)); err != nil {
			return err
		}
		return t.logRead(p, EntityTokenIntent, rec.ID, "Token intent read")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTokenIntent deletes the intent id of the key's tenant and its data.
// The key must be the one of the application or session that created it,
// or hold token-intent:delete.
//
// Returns NotFound (as GetTokenIntent), Unauthenticated, PermissionDenied,
// RateLimited, StorageFull, Internal.
func (v *Vault) DeleteTokenIntent(ctx context.Context, key Credential, id string) error {
	return v.deleteTokenIntentAs(ctx, keyCredential(key), id)
}

func (v *Vault) deleteTokenIntentAs(ctx context.Context, c credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, rec, err := t.ownIntent(c, id, PermTokenIntentDelete)
		if err != nil {
			return err
		}
		return t.deleteTokenIntent(p.Actor(), rec, "Token intent deleted")
	})
}

// errIntentNotFound answers every intent id that cannot be used, whatever
// the reason (never issued, expired, converted, deleted, another
// tenant's).
var errIntentNotFound = unit.NotFoundError("token intent")

// ownIntent authenticates c and returns the live intent id of its tenant,
// if c created it or holds perm. A key that neither created it nor holds
// perm is PermissionDenied only when it holds perm for no intent at all
// (checked before the lookup, so the answer says nothing of the id).
func (t *txn) ownIntent(c credential, id, perm string) (*principal, *intents.Record, error) {
	p, err := t.authenticateAs(c)
	if err != nil {
		return nil, nil, err
	}
	mayCreate := p.MayCreateIntent()
	if !p.Has(perm) && !mayCreate {
		return nil, nil, unit.Forbidden(perm)
	}
	rec, err := t.liveIntent(p.TenantID, id)
	if err != nil {
		return nil, nil, err
	}
	if !p.Has(perm) && (rec.CreatedBy != p.ActorID || rec.CreatedByType != p.ActorType) {
		// Another key's intent: the same answer as an unknown id.
		return nil, nil, errIntentNotFound
	}
	return p, rec, nil
}

// liveIntent returns the intent id of tenant tid, or errIntentNotFound if
// it does not exist or has expired.
func (t *txn) liveIntent(tid, id string) (*intents.Record, error) {
	if customIDProblem(id) != "" {
		return nil, errIntentNotFound
	}
	rec, err := t.getTokenIntent(tid, id)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Expired(t.Now) {
		return nil, errIntentNotFound
	}
	return rec, nil
}

// getTokenIntent reads the intent id of tenant tid, expired or not; nil
// when there is none.
func (t *txn) getTokenIntent(tid, id string) (*intents.Record, error) {
	var rec intents.Record
	ok, err := t.GetRecord(barrier.Tenant(tid).TokenIntent(id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}

// deleteTokenIntent removes an intent as removeTokenIntent does, with a
// log line of operation delete saying msg.
func (t *txn) deleteTokenIntent(by actor, rec *intents.Record, msg string) error {
	if err := t.emitIntent(EventTokenIntentDeleted, by, rec, ""); err != nil {
		return err
	}
	return t.removeTokenIntent(by, rec, OpDelete, msg)
}

// removeTokenIntent removes an intent, its expiry entry and its entries
// in the caps' indexes, with the log line (op, msg).
func (t *txn) removeTokenIntent(by actor, rec *intents.Record, op, msg string) error {
	for _, k := range append([]barrier.Key{
		barrier.Tenant(rec.TenantID).TokenIntent(rec.ID),
		barrier.Tenant(rec.TenantID).TokenIntentExpiry(rec.ExpiresAt, rec.ID),
	}, rec.IndexKeys()...) {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return t.Log(by, rec.TenantID, EntityTokenIntent, rec.ID, op, msg)
}

// msgIntentConverted is the log line of a conversion (operation update:
// the intent became a token; the token's own line says created).
const msgIntentConverted = "Token intent converted"

// maySeeIntentFingerprint reports whether p is shown the fingerprint of
// an intent of type typ: when it reads tokens of that type in clear in
// the type's default container (token:read there with the reveal
// transform, as for a token's fingerprint; mayReadClearIn). A public application never holds
// token:read, so a public key never is. A key that may not read such
// tokens could otherwise have any value of its choice fingerprinted and
// match it against the fingerprints of stored tokens a reader shows.
func maySeeIntentFingerprint(p *principal, typ string) bool {
	if p.ActorType == ActorApplication && p.AppType == Public {
		return false
	}
	c, ok := defaultContainer[typ]
	return ok && p.MayReadClearIn([]string{c})
}

// intentOf is the intent as returned: its data summarised, never shown; its
// fingerprint only when fingerprint is true (maySeeIntentFingerprint).
func intentOf(r *intents.Record, fingerprint bool) (*TokenIntent, error) {
	out := &TokenIntent{ID: r.ID, TenantID: r.TenantID, Type: r.Type,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if fingerprint {
		out.Fingerprint = r.Fingerprint
	}
	if r.Type == TypeCard {
		var card struct {
			Number string `json:"number"`
			Month  int    `json:"expiration_month"`
			Year   int    `json:"expiration_year"`
		}
		if err := json.Unmarshal(r.Data, &card); err != nil {
			return nil, err
		}
		out.Card = cardDetails(card.Number, card.Month, card.Year)
	}
	return out, nil
}

// intentData is the intent's data as plain JSON values.
func intentData(r *intents.Record) (any, error) { return decodeJSONLastWins(r.Data) }
