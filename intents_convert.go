package tokenvault

import (
	"bytes"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Converting a token intent into a token.
//
// A token request carrying token_intent_id (CreateToken, or a token
// request in Tokenize) takes its type and data from the intent; every
// other field (id, mask, containers, metadata, search indexes,
// fingerprint expression, expires_at) is the request's, validated as for
// any token once the data is known. In one transaction the intent is read,
// the token created and the intent deleted: two conversions of one intent
// cannot both succeed (the second finds no intent: NotFound), and a
// conversion that fails leaves the intent as it was.
//
// Only a private application's key converts (the backend's, holding
// token:create on the token's containers): a public key or a session is
// PermissionDenied, so that what a browser collected is placed by the
// backend. A card's cvc is not carried over: an intent may hold one for
// the time it lives, the token never gets it.
//
// Conversion deduplicates, as the hosted service's does: when a live token
// of the same type, fingerprint, fingerprint expression and containers
// exists that the key may read, the intent updates it instead of making a
// new one (whatever deduplicate_token says): its data is replaced by the
// intent's (so a card's new expiration is written, and a cvc it held is
// dropped, as the intent brings none), its mask and indexes recomputed,
// its other fields kept; the request's other fields are not applied. The
// update needs token:update on the token; a key without it gets the
// existing token unchanged (read, as a deduplicated create is). Either way
// the intent is consumed.
//
// Every conversion answers as a create does, whether it made a token or
// deduplicated onto one, changed or not: the data shaped by the transform
// of the key's token:create rule, a card or bank account never revealed
// (its mask). Answering a deduplicated conversion as a read (the whole
// number for a reveal rule) made the same request answer the mask the
// first time and the number the next (createAnswer).

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
// existing token it deduplicates to, and deletes the intent, all in t.
// Returns NotFound for an intent that does not exist (expired, converted,
// deleted, another tenant's), PermissionDenied for a key that is not a
// private application's or that sets expressions without a revealing
// token:create rule (checkConversionExpressions), Invalid when the request's fields do not fit the
// intent's data (paths under the request's).
func (t *txn) convertIntent(p *principal, pt *preparedToken) (*Token, error) {
	if p.ActorType != ActorApplication || p.AppType != Private {
		return nil, unit.Errorf(PermissionDenied, "token intents are converted with the key of a private application")
	}
	c := pt.intent
	rec, err := t.liveIntent(p.TenantID, c.id)
	if err != nil {
		return nil, err
	}
	data, err := intentData(rec)
	if err != nil {
		return nil, err
	}
	if err := checkConversionExpressions(p, c.req, rec.Type); err != nil {
		return nil, err
	}
	req := c.req
	req.TokenIntentID, req.Type, req.Data = "", rec.Type, exprData(rec.Type, data)
	req.DeduplicateToken = true
	fe := unit.FieldErrors{}
	full := prepareToken(req, t.Now, t.Now, c.path, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	existing, err := t.intentDuplicate(p, full)
	if err != nil {
		return nil, err
	}
	var tok *Token
	if existing != nil {
		tok, err = t.refreshFromIntent(p, existing, full, c.path)
	} else {
		tok, err = t.createToken(p, full)
	}
	if err != nil {
		return nil, err
	}
	if err := t.removeTokenIntent(p.Actor(), rec, OpUpdate, msgIntentConverted); err != nil {
		return nil, err
	}
	if err := t.emitIntent(EventTokenIntentConverted, p.Actor(), rec, tok.ID); err != nil {
		return nil, err
	}
	return tok, nil
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

// errExpressionsOverIntentData refuses a conversion setting expressions
// over data its key may not see (checkConversionExpressions).
var errExpressionsOverIntentData = unit.Errorf(PermissionDenied, "setting a mask, search indexes, fingerprint expression "+
	"or id expression when converting a token intent needs token:create with the reveal transform where the token "+
	"goes: the expressions would show the intent's data")

// checkConversionExpressions refuses, before anything is evaluated over
// the intent's data, a conversion that sets its own expressions (mask,
// search indexes, fingerprint expression, an id with {{ }}) when the
// key's token:create rule where the token goes does not reveal. The
// converting key did not send the data: how such an expression fares
// over it (an error or none, the mask in the answer) would read it, a
// character at a time, the intent kept after each failed guess, as a
// PATCH setting expressions over stored data would (readsStoredData).
// The type's default expressions are the same for every value of a type,
// so they tell nothing.
func checkConversionExpressions(p *principal, req TokenRequest, typ string) error {
	if req.Mask == nil && len(req.SearchIndexes) == 0 && req.FingerprintExpression == "" && !strings.Contains(req.ID, "{{") {
		return nil
	}
	containers := req.Containers
	if len(containers) == 0 {
		containers = []string{defaultContainer[typ]}
	}
	if transform, ok := p.Decide(PermTokenCreate, tokenScope{Containers: containers}); !ok || transform != TransformReveal {
		return errExpressionsOverIntentData
	}
	return nil
}
