package tokenvault

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Tokenize replaces the sensitive values of body with tokens and returns the
// same structure with token ids in their place. body may be a single token
// request (the result is one *Token), or any JSON object or array whose
// values are plain values, token requests, arrays and nested objects of
// these: each plain value becomes a token id string, each token request a
// *Token. Nulls are left as they are. body may be a Go value (a
// TokenRequest, maps and slices) or raw JSON ([]byte or json.RawMessage).
//
// The whole body is one transaction: if any value is invalid nothing is
// created, and the error names the path of each bad value, such as
// "cards[2].data.number"; a string (key or value) that is not valid UTF-8
// is Invalid with its path, never sealed with replacement characters.
// Requires token:create on each token's containers. A token request's id
// may be an alias expression (see TokenRequest.ID): a taken literal id,
// or an alias with no free draw, is a Conflict and creates nothing. A
// token request may carry token_intent_id instead of type and data,
// converting that token intent as CreateToken does (NotFound,
// PermissionDenied as there).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) Tokenize(ctx context.Context, key Credential, body any) (any, error) {
	return v.tokenizeAs(ctx, keyCredential(key), body)
}

func (v *Vault) tokenizeAs(ctx context.Context, c credential, body any) (any, error) {
	root, err := tokens.DecodeBody(body)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	count := 0
	now := v.now()
	tree := prepareTree(root, now, fe, &count)
	if count > tokens.MaxTokensPerRequest {
		return nil, unit.Errorf(Invalid, "a request may create at most %d tokens", tokens.MaxTokensPerRequest)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out any
	err = v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenCreate)
		if err != nil {
			return err
		}
		out, err = t.createTree(p, tree)
		return err
	})
	return out, err
}

// CreateToken creates one token. Requires token:create on its containers.
// A custom id that exists is a Conflict, the same whatever the existing
// token; so is an alias id (see TokenRequest.ID) when every alias drawn is
// taken, and an alias expression that cannot give an id, or breaks the
// display rule, is Invalid at "id". A request with TokenIntentID converts
// that token intent (intents_convert.go): only with a private
// application's key (PermissionDenied otherwise), NotFound for an intent
// that does not exist, has expired, was converted or deleted, or is
// another tenant's. A string of req that is not valid UTF-8 (in id, data, mask,
// containers, metadata keys and values, search_indexes or
// fingerprint_expression) is Invalid with its path.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateToken(ctx context.Context, key Credential, req TokenRequest) (*Token, error) {
	if err := checkGoText(req, ""); err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	now := v.now()
	pt := prepareToken(req, now, now, "", fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *Token
	err := v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenCreate)
		if err != nil {
			return err
		}
		out, err = t.createToken(p, pt)
		return err
	})
	return out, err
}

// prepareTree validates a Tokenize body, returning the same structure with
// every value to tokenize replaced by a *preparedToken.
func prepareTree(root any, now time.Time, fe unit.FieldErrors, count *int) any {
	tree, _ := tokens.Walk(root, "", func(v any, path string) (any, bool, error) {
		switch x := v.(type) {
		case nil:
			return nil, true, nil
		case map[string]any:
			if !tokens.IsRequest(x) {
				return nil, false, nil
			}
			*count++
			req, err := tokens.DecodeRequest(x, path)
			if err != nil {
				maps.Copy(fe, err.Fields)
				return nil, true, nil
			}
			return prepareToken(req, now, now, path, fe), true, nil
		case []any:
			return nil, false, nil
		}
		*count++
		pt := prepareToken(TokenRequest{Type: TypeToken, Data: v}, now, now, path, fe)
		pt.plain = true
		return pt, true, nil
	})
	return tree
}

// createTree creates the tokens of a prepared tree, in the stable order of
// tokens.Walk so that ids are assigned deterministically.
func (t *txn) createTree(p *principal, tree any) (any, error) {
	return tokens.Walk(tree, "", func(v any, _ string) (any, bool, error) {
		pt, ok := v.(*preparedToken)
		if !ok {
			return nil, false, nil
		}
		tok, err := t.createToken(p, pt)
		if err != nil || !pt.plain {
			return tok, true, err
		}
		return tok.ID, true, nil
	})
}

// createToken stores a prepared token with its indexes and log line, or,
// for a deduplicating request, returns (and logs the read of) the existing
// token it matches (see findDuplicate).
func (t *txn) createToken(p *principal, pt *preparedToken) (*Token, error) {
	if pt.intent != nil {
		return t.convertIntent(p, pt)
	}
	tid := p.TenantID
	if pt.idTmpl != nil {
		if err := t.deriveFPEID(p, pt); err != nil {
			return nil, err
		}
	}
	id := pt.id
	var expiredAlias *tokens.Record // an expired token holding the alias drawn
	var aliasTaken error            // no free alias: a Conflict unless a duplicate wins
	switch {
	case pt.alias != nil:
		var err error
		id, expiredAlias, err = t.freeAlias(tid, pt.alias)
		if err != nil && (ErrorKind(err) != Conflict || !pt.dedupe) {
			return nil, err
		}
		aliasTaken = err
	case id == "":
		id = t.v.ids.Next(t.Now)
	}
	if _, ok := p.Decide(PermTokenCreate, tokenScope{ID: id, Containers: pt.containers}); !ok {
		return nil, unit.Forbidden(PermTokenCreate)
	}
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	fingerprint := pt.fingerprint(ks)
	// A key that may not read tokens in clear where it creates this one
	// (no token:read there, or one that masks or redacts) is never told
	// of a duplicate, and the fingerprint index is not even looked up for
	// it: the time a match takes would tell a right guess.
	if pt.dedupe && fingerprint != "" && p.MayReadClearIn(pt.containers) {
		existing, err := t.findDuplicate(p, fingerprint, pt)
		if err != nil || existing != nil {
			if existing == nil {
				return nil, err
			}
			tok, transform := t.createAnswer(p, existing)
			if err := t.logTokenRead(p, existing.Type, existing.ID, "Token read (deduplicated create)",
				transform, ChannelCreate); err != nil {
				return nil, err
			}
			if err := tokens.EmitReadRecord(t.Tx, p, existing); err != nil {
				return nil, err
			}
			t.count(TokensRead)
			return tok, nil
		}
	}
	if aliasTaken != nil {
		return nil, aliasTaken
	}
	if pt.id != "" {
		old, err := t.loadToken(tid, id, true)
		if err != nil {
			return nil, err
		}
		if old != nil && !old.Expired(t.Now) {
			return nil, unit.Errorf(Conflict, "a token with this id exists")
		}
		if old != nil {
			if err := t.deleteToken(systemActor, old, "Token expired"); err != nil {
				return nil, err
			}
		}
	}
	if expiredAlias != nil {
		if err := t.deleteToken(systemActor, expiredAlias, "Token expired"); err != nil {
			return nil, err
		}
	}

	rec := &tokens.Record{ID: id, TenantID: tid, Type: pt.typ, CreatedBy: p.ActorID, CreatedAt: t.Now, AliasID: pt.alias != nil || pt.idTmpl != nil}
	pt.applyTo(rec, ks, t.Now, t.v.fingerprints == nil)
	if err := t.putToken(rec); err != nil {
		return nil, err
	}
	if err := t.Log(p.Actor(), tid, pt.typ, id, OpCreate, "Token created"); err != nil {
		return nil, err
	}
	if err := tokens.Emit(t.Tx, EventTokenCreated, p.Actor(), rec); err != nil {
		return nil, err
	}
	t.count(TokensCreated)
	return t.present(p, rec, PermTokenCreate, tokens.PresentCreated), nil
}

// createAnswer is the answer of a create that deduplicated to rec (a
// token p reads in clear: findDuplicate looks no further), and the transform
// that shaped its data: the answer the create would have had if it had
// made the token (tokens.PresentCreated, the transform of p's token:create rule,
// a card or bank account masked), so that one request answers the same
// shape whether it made the token or found it. Answering it as a read
// showed a reveal rule's key the mask the first time and the whole number
// on a repeat.
func (t *txn) createAnswer(p *principal, rec *tokens.Record) (*Token, string) {
	return t.present(p, rec, PermTokenCreate, tokens.PresentCreated), tokens.PresentTransform(p, rec, PermTokenCreate)
}

// applyTo sets everything of rec that the request decides: data, mask,
// placement, metadata, expressions, fingerprint, when a card's cvc was
// written, and the index and schedule entries that follow from them.
func (pt *preparedToken) applyTo(rec *tokens.Record, ks *barrier.Keys, now time.Time, fpInStore bool) {
	rec.Containers, rec.Metadata, rec.SearchIndexes = pt.containers, pt.metadata, pt.searchExprs
	rec.FingerprintExpression, rec.DeduplicateToken, rec.ExpiresAt = pt.fpExpr, pt.dedupe, pt.expiresAt
	rec.Fingerprint = pt.fingerprint(ks)
	rec.Data = pt.dataJSON
	rec.Mask, rec.MaskExpression = nil, nil
	if pt.mask != nil {
		rec.Mask, _ = json.Marshal(pt.mask)
		rec.MaskExpression, _ = json.Marshal(pt.maskExpr)
	}
	switch {
	case !tokens.HasCVC(pt.typ, pt.data):
		rec.CVCAt = nil
	case rec.CVCAt == nil || pt.newCVC:
		at := now
		rec.CVCAt = &at
	}
	rec.Indexes = tokens.Indexes(ks, rec, pt.search, fpInStore)
}

// fingerprint is the fingerprint of the token's fingerprint value under ks,
// "" when it has none. It is computed once per key set: creating a token
// needs it for the duplicate lookup and for the record.
func (pt *preparedToken) fingerprint(ks *barrier.Keys) string {
	if pt.fpValue == "" {
		return ""
	}
	if pt.fpKeys != ks {
		pt.fp, pt.fpKeys = tokens.FingerprintOf(ks, pt.fpValue), ks
	}
	return pt.fp
}

// findDuplicate returns the live token a deduplicating request matches:
// same type, fingerprint, fingerprint expression and containers, among the
// tokens p reads in clear (mayReadClear). The containers keep
// deduplication from returning a token of a container the request did
// not name; the expression keeps a chosen literal from matching another
// token's fingerprint; and reading in clear keeps a key that may not see
// a token's data (no token:read, or one that masks or redacts it) from
// learning, by getting its id back, that a guessed value is its value:
// such a key always gets a new token.
func (t *txn) findDuplicate(p *principal, fp string, pt *preparedToken) (*tokens.Record, error) {
	tid := p.TenantID
	ids, err := t.fingerprintIDs(tid, fp)
	if err != nil {
		return nil, err
	}
	want := slices.Sorted(slices.Values(pt.containers))
	for _, id := range ids {
		rec, err := t.loadToken(tid, id, false)
		if err != nil {
			return nil, err
		}
		if rec != nil && rec.Fingerprint == fp && rec.Type == pt.typ && rec.FingerprintExpression == pt.fpExpr &&
			slices.Equal(slices.Sorted(slices.Values(rec.Containers)), want) && p.MayReadClear(tokens.ScopeOf(rec)) {
			return rec, nil
		}
	}
	return nil, nil
}

// MaxDetokenizedTokens is how many distinct tokens one request may
// detokenize (the spec's limit for reactors, applied everywhere).
const MaxDetokenizedTokens = tokens.MaxDetokenized

// Detokenize returns body with every {{ <token_id> }} expression replaced by
// the token's data: a string that is exactly one expression becomes the
// value with its JSON type (objects stay objects), an expression inside
// longer text is inserted as text. Filters apply, for example
// {{ <token_id> | json: '$.number' }}. The data inserted is shaped by the
// caller's token:read access to each token (reveal, mask, or null for
// redact).
//
// An expression naming an unknown token is Invalid, with the path of the
// string; a token the caller may not read is PermissionDenied. Each token
// detokenized is logged. Requires token:read on each token's containers.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) Detokenize(ctx context.Context, key Credential, body any) (any, error) {
	return v.detokenizeAs(ctx, keyCredential(key), body)
}

func (v *Vault) detokenizeAs(ctx context.Context, c credential, body any) (any, error) {
	doc, err := tokens.DecodeBody(body)
	if err != nil {
		return nil, err
	}
	var out any
	err = v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenRead)
		if err != nil {
			return err
		}
		out, err = t.detokenize(p, PermTokenRead, doc, "Token detokenized", ChannelDetokenize)
		return err
	})
	return out, err
}

// detokenize replaces token expressions in doc (plain JSON values) using
// perm's transforms (tokens.Service.Detokenize), logging each distinct
// token once with msg, its transform and channel.
func (t *txn) detokenize(p *principal, perm string, doc any, msg, channel string) (any, error) {
	return t.v.tokens.Detokenize(t.Tx, p, perm, doc, func(rec *tokens.Record, transform string) error {
		t.count(TokensDetokenized)
		return t.logTokenRead(p, rec.Type, rec.ID, msg, transform, channel)
	})
}
