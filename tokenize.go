package tokenvault

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
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
		id, err := aliasRules.DeriveFPEID(t.Tx, p, pt.containers, pt.idTmpl, pt.idVars, pt.idPath)
		if err != nil {
			return nil, err
		}
		pt.id = id
	}
	id := pt.id
	var expiredAlias *tokens.Record // an expired token holding the alias drawn
	var aliasTaken error            // no free alias: a Conflict unless a duplicate wins
	switch {
	case pt.alias != nil:
		var err error
		id, err = pt.alias.Free(t.v.rand, func(id string) (bool, error) {
			old, err := t.loadToken(tid, id, true)
			if err != nil || old == nil {
				return false, err
			}
			if old.Expired(t.Now) {
				expiredAlias = old // replaced by the new token
				return false, nil
			}
			return true, nil
		})
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

// MaxDetokenizedTokens (100) is how many distinct tokens one request may
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

// GetToken returns a token, its data shaped by the caller's token:read
// access; its fingerprint only where that access reveals the data (see
// mayReadClear). Requires token:read on the token's containers.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit, PermissionDenied without
// token:read on its containers, or Internal.
func (v *Vault) GetToken(ctx context.Context, key Credential, id string) (*Token, error) {
	return v.getTokenAs(ctx, keyCredential(key), id)
}

func (v *Vault) getTokenAs(ctx context.Context, c credential, id string) (*Token, error) {
	var out *Token
	err := v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenRead)
		if err != nil {
			return err
		}
		rec, transform, err := t.mustToken(p, id, PermTokenRead)
		if err != nil {
			return err
		}
		out = tokens.TokenOf(rec, transform)
		if transform != TransformReveal {
			out.Fingerprint = "" // equality with the data: only for who sees it
		}
		t.count(TokensRead)
		if err := tokens.EmitReadRecord(t.Tx, p, rec); err != nil {
			return err
		}
		return t.logTokenRead(p, rec.Type, rec.ID, "Token read", transform, ChannelGet)
	})
	return out, err
}

// DeleteToken deletes a token and its index entries. Requires token:delete
// on the token's containers.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit, PermissionDenied without
// token:delete on its containers, StorageFull, or Internal.
func (v *Vault) DeleteToken(ctx context.Context, key Credential, id string) error {
	return v.deleteTokenAs(ctx, keyCredential(key), id)
}

func (v *Vault) deleteTokenAs(ctx context.Context, c credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenDelete)
		if err != nil {
			return err
		}
		rec, _, err := t.mustToken(p, id, PermTokenDelete)
		if err != nil {
			return err
		}
		t.count(TokensDeleted)
		return t.deleteToken(p.Actor(), rec, "Token deleted")
	})
}

// UpdateToken applies patch, an RFC 7386 JSON merge patch, to a token:
// data, mask and metadata are merged (null removes a key); containers,
// search_indexes, fingerprint_expression, deduplicate_token and expires_at
// are replaced when present; id and type cannot change. The token is
// validated again and its fingerprint, mask and indexes recomputed. Requires
// token:update on the token's containers, old and new; setting a mask,
// search_indexes or fingerprint_expression over stored data the patch does
// not replace whole also needs the reveal transform there, since their
// results reach the caller. Moving the token to containers where the key's
// token:read access is wider than where it is is PermissionDenied. A mask
// of a card that would show more of its number than the BIN and last four
// is Invalid at "mask", whatever the token's id (the display rule of
// TokenRequest.ID); so is a mask of a token with an alias or fpe id that
// would show less, over the stored data, than the mask it replaces.
//
// A key that may not read the token (token:read on its containers) gets
// back its id, type, containers, expiry, timestamps and actors only: no
// data, mask, fingerprint, fingerprint expression, metadata or search
// indexes; and its patch that sets mask, search_indexes or
// fingerprint_expression together with data replaces the data whole (not
// merged), so that the answer does not depend on the stored fields. A card
// patch sending a cvc starts a new retention window for it (see
// Options.Retention.CVC).
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) UpdateToken(ctx context.Context, key Credential, id string, patch json.RawMessage) (*Token, error) {
	doc, err := decodeJSON(patch)
	if refused(err) {
		return nil, err
	}
	if err != nil {
		return nil, unit.InvalidField("", "the body is not valid JSON")
	}
	fields, ok := doc.(map[string]any)
	if !ok {
		return nil, unit.InvalidField("", "a token patch must be an object")
	}
	fe := unit.FieldErrors{}
	for k := range fields {
		switch k {
		case "id", "type":
			fe.Add(k, "cannot be changed")
		case "data", "mask", "metadata", "containers", "search_indexes", "fingerprint_expression", "deduplicate_token", "expires_at":
		default:
			fe.Add(k, "unknown field")
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *Token
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenUpdate)
		if err != nil {
			return err
		}
		rec, transform, err := t.mustToken(p, id, PermTokenUpdate)
		if err != nil {
			return err
		}
		// A key that may not read the token, setting an expression with
		// data, replaces the data whole: whether its data covers every
		// stored field would otherwise decide the answer (see
		// tokens.ReadsStoredData), telling it what fields are stored.
		replaceData := tokens.SetsExpression(fields) && fields["data"] != nil && !p.MayRead(tokens.ScopeOf(rec))
		req, err := tokens.PatchedRequest(rec, fields, replaceData)
		if err != nil {
			return err
		}
		// Before any expression is evaluated: how a new expression fares
		// over the stored data (an error, or none) would answer a key that
		// may not read it, a digit at a time.
		if tokens.ReadsStoredData(fields, req) && transform != TransformReveal {
			return tokens.ErrExpressionsOverStoredData
		}
		fe := unit.FieldErrors{}
		// A card that expired after it was tokenized stays editable
		// (metadata, containers, ...): its expiry is checked only when
		// the patch changes the card (its number or its expiry).
		// For a key that may not read the token in clear, whether the patch sends
		// the stored number and expiry must not change the answer (it
		// would test a guess against an expired card): its patch is
		// checked whenever it sends data.
		cardsValidOn := t.Now
		_, sendsData := fields["data"]
		if rec.Type == TypeCard && (!sendsData || p.MayReadClear(tokens.ScopeOf(rec)) && tokens.SameCard(rec.Data, req.Data)) {
			cardsValidOn = time.Time{}
		}
		_, setsMask := fields["mask"]
		pt := prepareTokenShown(req, t.Now, cardsValidOn, "", setsMask || sendsData, fe)
		if err := fe.Err(); err != nil {
			return err
		}
		moved, ok := p.Decide(PermTokenUpdate, tokenScope{ID: rec.ID, Containers: pt.containers})
		if !ok {
			return unit.Forbidden(PermTokenUpdate)
		}
		if !tokens.ReadsNoMore(p, rec, pt.containers) {
			return unit.Errorf(PermissionDenied, "a token may not be moved to containers where the key could read "+
				"more of it than where it is")
		}
		if tokens.ReadsStoredData(fields, req) && moved != TransformReveal {
			return tokens.ErrExpressionsOverStoredData
		}
		// After the permission checks, as it reads the stored data.
		if _, ok := fields["mask"]; ok {
			aliasRules.CheckMaskKeepsID(rec.AliasID, rec.Type, rec.Data, rec.MaskExpression, pt.maskExpr, fe)
			if err := fe.Err(); err != nil {
				return err
			}
		}
		ks, err := t.TenantKeys(p.TenantID, false)
		if err != nil {
			return err
		}
		for _, k := range rec.Indexes {
			if err := t.Delete(barrier.IndexEntry(k)); err != nil {
				return err
			}
		}
		now := t.Now
		// A patch keeps the token's identity and creation; applyTo sets
		// everything the request decides, and the cvc's window is kept
		// below.
		next := &tokens.Record{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt,
			AliasID: rec.AliasID}
		if at, ok := tokens.CVCWrittenAt(rec); ok {
			next.CVCAt = &at // the stored cvc's window goes on
		}
		next.ModifiedBy, next.ModifiedAt = p.ActorID, &now
		patchData, _ := fields["data"].(map[string]any)
		pt.newCVC = patchData[tokens.CVCField] != nil
		pt.applyTo(next, ks, t.Now, t.v.fingerprints == nil)
		t.unindexFingerprint(rec)
		if err := t.writeToken(rec, next); err != nil {
			return err
		}
		out = t.present(p, next, PermTokenUpdate, tokens.PresentUpdated)
		t.count(TokensUpdated)
		if err := tokens.Emit(t.Tx, EventTokenUpdated, p.Actor(), next); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, next.Type, next.ID, OpUpdate, "Token updated")
	})
	return out, err
}

// TokenizeCard creates a card token in the card's default container
// (/pci/high/), as CreateToken with Type card and Data card. Its answer
// never reveals the number: it carries the mask (the last four digits,
// the expiration). For containers, metadata or a custom id, give the Card
// as the Data of a TokenRequest to CreateToken. Over HTTP: POST /tokens
// with {"type": "card", "data": {...}}; package client has the same
// method.
//
// Returns Invalid naming each bad field (data.number, data.expiration_month,
// data.expiration_year, data.cvc; "the card has expired" on
// data.expiration_year), Unauthenticated for an unknown key,
// PermissionDenied without token:create on /pci/high/, RateLimited,
// StorageFull or Internal.
func (v *Vault) TokenizeCard(ctx context.Context, key Credential, card Card) (*Token, error) {
	return v.CreateToken(ctx, key, TokenRequest{Type: TypeCard, Data: card.data()})
}

// data is the card as plain Go values, which the Vault checks and copies
// in one walk (a struct would take a JSON round trip to get there).
func (c Card) data() map[string]any {
	d := map[string]any{
		"number":           c.Number,
		"expiration_month": c.ExpirationMonth,
		"expiration_year":  c.ExpirationYear,
	}
	if c.CVC != "" {
		d["cvc"] = c.CVC
	}
	return d
}

// TokenizeValue creates a plain token (type token, in its default
// container) holding value, any JSON value but null: a string, a number,
// an object or an array. As CreateToken with Type token; over HTTP POST
// /tokens with {"type": "token", "data": value}; package client has the
// same method.
//
// Returns Invalid when value is null, does not encode as JSON or holds a
// string that is not valid UTF-8 (with its path under "data"),
// Unauthenticated, PermissionDenied without token:create, RateLimited,
// StorageFull or Internal.
func (v *Vault) TokenizeValue(ctx context.Context, key Credential, value any) (*Token, error) {
	return v.CreateToken(ctx, key, TokenRequest{Type: TypeToken, Data: value})
}

// TokenizeAs creates one plain token holding value, a value of the
// caller's own type (a struct, a map, a slice...), encoded as JSON: the
// whole value is one token, read back whole with DetokenizeAs[T]. It is
// a function, not a method, because methods cannot have type parameters;
// c is a *Vault, or a *client.Client for the same call over HTTP (POST
// /tokens).
//
// Returns Invalid when value does not encode as JSON, encodes as null, or
// holds a string that is not valid UTF-8 (with its path under "data"),
// and what CreateToken returns: Unauthenticated, PermissionDenied without
// token:create, RateLimited, StorageFull, Internal.
func TokenizeAs[T any](ctx context.Context, c TokenCreator, key Credential, value T) (*Token, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, &Error{Kind: Invalid, Message: "the value does not encode as JSON",
			Fields: map[string][]string{"data": {"does not encode as JSON"}}}
	}
	return c.CreateToken(ctx, key, TokenRequest{Type: TypeToken, Data: json.RawMessage(data)})
}

// DetokenizeAs reads the token id and decodes its data into a T, the
// caller's own type (typically the T given to TokenizeAs). The data is
// what GetToken answers: shaped by the key's token:read transform, so a
// key that may see only the mask decodes the mask, and the read is
// audited. c is a *Vault, or a *client.Client for the same call over HTTP
// (GET /tokens/{id}).
//
// Returns PermissionDenied when the key's access redacts the data (there
// is nothing to decode: never a silent zero T), Invalid naming "data"
// when the data does not decode into T (a mask shaped otherwise than the
// value, or another type), and what GetToken returns: NotFound for an
// unknown or another tenant's token, Unauthenticated, PermissionDenied
// without token:read, RateLimited, Internal.
func DetokenizeAs[T any](ctx context.Context, c TokenReader, key Credential, id string) (T, error) {
	var out T
	tok, err := c.GetToken(ctx, key, id)
	if err != nil {
		return out, err
	}
	if tok.Data == nil {
		return out, &Error{Kind: PermissionDenied, Message: "the key's access redacts this token's data"}
	}
	b, err := json.Marshal(tok.Data)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, &Error{Kind: Invalid, Message: "the token's data does not decode into " + reflect.TypeFor[T]().String(),
			Fields: map[string][]string{"data": {"does not decode into " + reflect.TypeFor[T]().String()}}}
	}
	return out, nil
}
