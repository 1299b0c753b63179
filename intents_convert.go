package tokenvault

import (
	"time"
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
// Conversion deduplicates: when a live token of the same type,
// fingerprint, fingerprint expression and containers exists that the key
// may read, it is returned (read, as a deduplicated create is) and the
// intent is consumed, whatever deduplicate_token says; the existing token
// is not changed.

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
func prepareConversion(req TokenRequest, now time.Time, path string, fe fieldErrors) *intentConversion {
	if req.Type != "" {
		fe.add(join(path, "type"), "must not be given with token_intent_id: the intent's type is used")
	}
	if req.Data != nil {
		fe.add(join(path, "data"), "must not be given with token_intent_id: the intent's data is used")
	}
	if customIDProblem(req.TokenIntentID) != "" {
		fe.add(join(path, "token_intent_id"), "is not a token intent id")
	}
	if req.ExpiresAt != nil {
		checkExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	validateMetadata(req.Metadata, join(path, "metadata"), fe)
	return &intentConversion{id: req.TokenIntentID, req: req, path: path}
}

// convertIntent creates the token a conversion asks for, or returns the
// existing token it deduplicates to, and deletes the intent, all in t.
// Returns NotFound for an intent that does not exist (expired, converted,
// deleted, another tenant's), PermissionDenied for a key that is not a
// private application's, Invalid when the request's fields do not fit the
// intent's data (paths under the request's).
func (t *txn) convertIntent(p *principal, pt *preparedToken) (*Token, error) {
	if p.actorType != ActorApplication || p.appType != Private {
		return nil, errorf(PermissionDenied, "token intents are converted with the key of a private application")
	}
	c := pt.intent
	rec, err := t.liveIntent(p.tenantID, c.id)
	if err != nil {
		return nil, err
	}
	data, err := rec.data()
	if err != nil {
		return nil, err
	}
	req := c.req
	req.TokenIntentID, req.Type, req.Data = "", rec.Type, exprData(rec.Type, data)
	req.DeduplicateToken = true
	fe := fieldErrors{}
	full := prepareToken(req, t.now, t.now, c.path, fe)
	if err := fe.err(); err != nil {
		return nil, err
	}
	tok, err := t.createToken(p, full)
	if err != nil {
		return nil, err
	}
	if err := t.removeTokenIntent(p.actor(), rec, OpUpdate, msgIntentConverted); err != nil {
		return nil, err
	}
	return tok, nil
}
