package tokenvault

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/tokens"
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
// Who may do what (decided in internal/intents; docs/internals.md,
// "Token intents"):
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
//
// This file is the feature's page of the facade: the Vault methods
// authenticate and delegate to internal/intents, which owns the intent
// (its record, caps, conversion rules and events); the public types are
// its, by alias. Converting an intent makes a token, which is the token
// core's business: that side of a conversion is here, handed to
// intents.Convert as a function.

// Token intent lifetimes.
const (
	// DefaultTokenIntentLifetime is how long an intent lives when its
	// request gives no expires_at and Options.Retention.TokenIntent is
	// zero.
	DefaultTokenIntentLifetime = intents.DefaultLifetime
	// MaxTokenIntentLifetime bounds an intent's expires_at, counted from
	// its creation, and Options.Retention.TokenIntent.
	MaxTokenIntentLifetime = intents.MaxLifetime
)

// Defaults of the token intent caps (internal/intents, limits.go).
const (
	// DefaultMaxPendingTokenIntents is
	// Options.Limits.MaxPendingTokenIntentsPerApplication's zero value: the
	// live intents one application or session may have; past it new ones
	// are refused (RateLimited), none evicted.
	DefaultMaxPendingTokenIntents = intents.DefaultMax
	// DefaultMaxPendingTokenIntentsPerAddress is
	// Options.Limits.MaxPendingTokenIntentsPerAddress's zero value: the
	// live intents one application or session may have created from one
	// client address before that address's oldest is evicted.
	DefaultMaxPendingTokenIntentsPerAddress = intents.DefaultMaxPerAddress
)

// Token intent permissions (see PermissionsFor).
const (
	PermTokenIntentCreate = access.PermTokenIntentCreate
	PermTokenIntentRead   = access.PermTokenIntentRead
	PermTokenIntentDelete = access.PermTokenIntentDelete
)

// TokenIntentRequest is the body of CreateTokenIntent.
type TokenIntentRequest = intents.Request

// TokenIntent is a token intent as returned: never its data.
type TokenIntent = intents.Intent

// CardDetails is what a token intent tells of a card: no more than PCI
// DSS allows to be displayed (the BIN and the last four digits).
type CardDetails = intents.CardDetails

// Card brands, by the number's prefix ranges (the networks' published
// IIN ranges; no external data). A number of no known range is
// BrandUnknown.
const (
	BrandVisa       = intents.BrandVisa
	BrandMastercard = intents.BrandMastercard
	BrandAmex       = intents.BrandAmex
	BrandDiscover   = intents.BrandDiscover
	BrandJCB        = intents.BrandJCB
	BrandDiners     = intents.BrandDiners
	BrandUnionPay   = intents.BrandUnionPay
	BrandMaestro    = intents.BrandMaestro
	BrandMir        = intents.BrandMir
	BrandElo        = intents.BrandElo
	BrandUnknown    = intents.BrandUnknown
)

// CardBrand names the network of a card number (digits only) by its
// prefix: one of the Brand constants.
func CardBrand(number string) string { return intents.CardBrand(number) }

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
// internal/intents, limits.go).
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
	if req.ExpiresAt != nil {
		intents.CheckExpiry(*req.ExpiresAt, now, fe)
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
		rec, err := t.v.intents.Create(t.Tx, p, intents.New{Type: pt.typ, Data: data, Fingerprint: pt.fingerprint(ks),
			ExpiresAt: req.ExpiresAt})
		if err != nil {
			return err
		}
		out, err = intents.Of(rec, maySeeIntentFingerprint(p, rec.Type))
		return err
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
		p, err := t.authenticateAs(c)
		if err != nil {
			return err
		}
		rec, err := intents.Own(t.Tx, p, id, PermTokenIntentRead)
		if err != nil {
			return err
		}
		if out, err = intents.Of(rec, maySeeIntentFingerprint(p, rec.Type)); err != nil {
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
		p, err := t.authenticateAs(c)
		if err != nil {
			return err
		}
		rec, err := intents.Own(t.Tx, p, id, PermTokenIntentDelete)
		if err != nil {
			return err
		}
		return intents.Delete(t.Tx, p.Actor(), rec, "Token intent deleted")
	})
}

// maySeeIntentFingerprint reports whether p is shown the fingerprint of
// an intent of type typ (intents.MaySeeFingerprint, in the type's default
// container).
func maySeeIntentFingerprint(p *principal, typ string) bool {
	return intents.MaySeeFingerprint(p, defaultContainer[typ])
}

// The token's side of a conversion (internal/intents, convert.go, has the
// rules): the request's own fields checked before the transaction, then,
// in it, the intent's data validated as a token's, deduplicated or
// created.

// intentConversion is what a conversion request carries until its
// transaction reads the intent.
type intentConversion struct {
	id   string
	req  TokenRequest
	path string
}

// prepareConversion checks a conversion request's own fields: type and
// data must be absent, and the intent id must be one an intent can have.
// The rest is checked once the intent's data is known (convertIntent).
func prepareConversion(req TokenRequest, now time.Time, path string, fe unit.FieldErrors) *intentConversion {
	if req.Type != "" {
		fe.Add(join(path, "type"), "must not be given with token_intent_id: the intent's type is used")
	}
	if req.Data != nil {
		fe.Add(join(path, "data"), "must not be given with token_intent_id: the intent's data is used")
	}
	if customIDProblem(req.TokenIntentID) != "" {
		fe.Add(join(path, "token_intent_id"), "is not a token intent id")
	}
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	validateMetadata(req.Metadata, join(path, "metadata"), fe)
	return &intentConversion{id: req.TokenIntentID, req: req, path: path}
}

// convertIntent creates the token a conversion asks for, or returns the
// existing token it deduplicates to, and deletes the intent, all in t
// (intents.Convert). Returns NotFound for an intent that does not exist
// (expired, converted, deleted, another tenant's), PermissionDenied for a
// key that is not a private application's or that sets expressions
// without a revealing token:create rule (intents.CheckExpressions),
// Invalid when the request's fields do not fit the intent's data (paths
// under the request's).
func (t *txn) convertIntent(p *principal, pt *preparedToken) (*Token, error) {
	c := pt.intent
	var tok *Token
	err := intents.Convert(t.Tx, p, c.id, func(rec *intents.Record) (string, error) {
		data, err := decodeJSONLastWins(rec.Data)
		if err != nil {
			return "", err
		}
		if conversionSetsExpressions(c.req) {
			containers := c.req.Containers
			if len(containers) == 0 {
				containers = []string{defaultContainer[rec.Type]}
			}
			if err := intents.CheckExpressions(p, containers); err != nil {
				return "", err
			}
		}
		req := c.req
		req.TokenIntentID, req.Type, req.Data = "", rec.Type, exprData(rec.Type, data)
		req.DeduplicateToken = true
		fe := unit.FieldErrors{}
		full := prepareToken(req, t.Now, t.Now, c.path, fe)
		if err := fe.Err(); err != nil {
			return "", err
		}
		existing, err := t.intentDuplicate(p, full)
		if err != nil {
			return "", err
		}
		if existing != nil {
			tok, err = t.refreshFromIntent(p, existing, full, c.path)
		} else {
			tok, err = t.createToken(p, full)
		}
		if err != nil {
			return "", err
		}
		return tok.ID, nil
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// conversionSetsExpressions reports whether a conversion request sets
// expressions of its own (a mask, search indexes, a fingerprint
// expression, an id with {{ }}), which intents.CheckExpressions allows
// only to a key that may see the intent's data.
func conversionSetsExpressions(req TokenRequest) bool {
	return req.Mask != nil || len(req.SearchIndexes) > 0 || req.FingerprintExpression != "" || strings.Contains(req.ID, "{{")
}

// intentDuplicate is the live token a conversion deduplicates to (see
// findDuplicate), or nil. As createToken, it needs token:create where the
// token would be made, and looks nothing up for a key that may not read
// in clear there (mayReadClearIn).
func (t *txn) intentDuplicate(p *principal, full *preparedToken) (*tokens.Record, error) {
	if _, ok := p.Decide(PermTokenCreate, tokenScope{ID: full.id, Containers: full.containers}); !ok {
		return nil, unit.Forbidden(PermTokenCreate)
	}
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return nil, err
	}
	fp := full.fingerprint(ks)
	if fp == "" || !p.MayReadClearIn(full.containers) {
		return nil, nil
	}
	return t.findDuplicate(p, fp, full)
}

// refreshFromIntent writes the intent's data (full's) into rec, the token
// a conversion deduplicates to, as UpdateToken would with the data
// replaced whole, and returns it as a deduplicated create does. Data that
// is the same already, or a key without token:update on rec, leaves it
// unchanged.
func (t *txn) refreshFromIntent(p *principal, rec *tokens.Record, full *preparedToken, path string) (*Token, error) {
	if _, mayUpdate := p.Decide(PermTokenUpdate, scopeOf(rec)); !mayUpdate || bytes.Equal(rec.Data, full.dataJSON) {
		tok, transform := t.createAnswer(p, rec)
		if err := t.logTokenRead(p, rec.Type, rec.ID, "Token read (deduplicated create)",
			transform, ChannelCreate); err != nil {
			return nil, err
		}
		if err := t.emitTokenReadRecord(p, rec); err != nil {
			return nil, err
		}
		t.count(TokensRead)
		return tok, nil
	}
	req, err := patchedRequest(rec, map[string]any{"data": full.data}, true)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	pt := prepareToken(req, t.Now, t.Now, path, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return nil, err
	}
	for _, k := range rec.Indexes {
		if err := t.Delete(barrier.IndexEntry(k)); err != nil {
			return nil, err
		}
	}
	now := t.Now
	next := &tokens.Record{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt,
		ModifiedBy: p.ActorID, ModifiedAt: &now}
	pt.newCVC = false // the intent brings no cvc
	pt.applyTo(next, ks, t.Now, t.v.fingerprints == nil)
	t.unindexFingerprint(rec)
	if err := t.writeToken(rec, next); err != nil {
		return nil, err
	}
	t.count(TokensUpdated)
	if err := t.Log(p.Actor(), p.TenantID, next.Type, next.ID, OpUpdate, "Token updated (token intent converted)"); err != nil {
		return nil, err
	}
	if err := t.emitToken(EventTokenUpdated, p.Actor(), next); err != nil {
		return nil, err
	}
	tok, _ := t.createAnswer(p, next)
	return tok, nil
}
