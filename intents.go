package tokenvault

import (
	"context"
	"encoding/json"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/jsontext"
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
// feature's business: internal/tokens (convert.go) prepares and creates
// it, calling intents.Convert through intents.Converter.

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
	if err := jsontext.CheckGoText(req, ""); err != nil {
		return nil, err
	}
	now := v.now()
	fe := unit.FieldErrors{}
	pt := v.tokens.Prepare(TokenRequest{Type: req.Type, Data: req.Data}, now, now, "", true, fe)
	if req.ExpiresAt != nil {
		intents.CheckExpiry(*req.ExpiresAt, now, fe)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// A card's cvc is validated, not kept: nothing reads it (a conversion
	// never carries it over), and an intent lives up to 48 hours, past
	// Options.Retention.CVC.
	data, err := json.Marshal(tokens.ExprData(pt.Type, pt.Data))
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
		rec, err := t.v.intents.Create(t.Tx, p, intents.New{Type: pt.Type, Data: data, Fingerprint: pt.Fingerprint(ks),
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
	return intents.MaySeeFingerprint(p, tokens.DefaultContainer[typ])
}
