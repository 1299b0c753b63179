package tokenvault

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
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
	root, err := tokenizeBody(body)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	count := 0
	now := v.now()
	tree := prepareTree(root, now, fe, &count)
	if count > maxTokensPerRequest {
		return nil, unit.Errorf(Invalid, "a request may create at most %d tokens", maxTokensPerRequest)
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

// tokenizeBody decodes a Tokenize body into plain JSON values, once (see
// jsontext_plain.go). Strings that are not valid UTF-8 are Invalid (see
// checkGoText and decodeJSON).
func tokenizeBody(body any) (any, error) {
	var b []byte
	switch x := body.(type) {
	case jsoncheck.Doc: // httpapi's: checked and decoded
		v, err := docValue(x)
		if err != nil {
			return nil, err
		}
		return bodyShape(v)
	case json.RawMessage: // its text is checked by decodeJSON
		b = x
	case []byte:
		b = x
	default:
		if v, ok := plainCopy(body); ok {
			return bodyShape(v)
		}
		if err := checkGoText(body, ""); err != nil {
			return nil, err
		}
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, unit.InvalidField("", "the body cannot be encoded as JSON")
		}
	}
	v, err := decodeJSON(b)
	if refused(err) {
		return nil, err
	}
	if err != nil {
		return nil, unit.InvalidField("", "the body is not valid JSON")
	}
	return bodyShape(v)
}

// bodyShape refuses a decoded body that is neither an object nor an array.
func bodyShape(v any) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
		return v, nil
	}
	return nil, unit.InvalidField("", "the body must be a token request, an object or an array")
}

// isTokenRequest tells a token request from a plain nested object: it has
// a "type" naming a token type and a "data" property, or it converts a
// token intent: a string "token_intent_id" (type and data are then the
// intent's, and given anyway they are refused by prepareToken).
func isTokenRequest(m map[string]any) bool {
	if _, ok := m["token_intent_id"].(string); ok {
		return true
	}
	typ, _ := m["type"].(string)
	_, hasData := m["data"]
	return hasData && slices.Contains(tokenTypes, typ)
}

// prepareTree validates a Tokenize body, returning the same structure with
// every value to tokenize replaced by a *preparedToken.
func prepareTree(root any, now time.Time, fe unit.FieldErrors, count *int) any {
	tree, _ := rewriteJSON(root, "", func(v any, path string) (any, bool, error) {
		switch x := v.(type) {
		case nil:
			return nil, true, nil
		case map[string]any:
			if !isTokenRequest(x) {
				return nil, false, nil
			}
			*count++
			req, err := decodeTokenRequest(x, path)
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

// decodeTokenRequest decodes a token request object strictly: unknown
// fields and wrong types are errors under path.
func decodeTokenRequest(m map[string]any, path string) (TokenRequest, *Error) {
	if req, ok := tokenRequestOf(m); ok {
		return req, nil
	}
	return decodeTokenRequestJSON(m, path)
}

// decodeTokenRequestJSON is decodeTokenRequest through encoding/json.
func decodeTokenRequestJSON(m map[string]any, path string) (TokenRequest, *Error) {
	var req TokenRequest
	// Keys equal but for case ("data" and "DATA") go into one field:
	// encoding/json would keep one of them without a word.
	if e := jsoncheck.Fold(m, tokenRequestType); e != nil {
		return req, unit.InvalidField(jsoncheck.Join(path, e.Path), "%s", e.Message())
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for k, v := range md {
			if v == nil {
				// encoding/json would store it as "" without a word.
				return req, unit.InvalidField(join(join(path, "metadata"), k), "must be a string, not null")
			}
		}
	}
	b, _ := json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil {
		return req, nil
	}
	if e := badDateTime(m, "expires_at", path); e != nil {
		return req, e
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return req, unit.InvalidField(join(path, typ.Field), "must be a %s", jsonTypeName(typ.Type.Kind().String()))
	}
	if u := jsoncheck.UnknownField(b, tokenRequestType); u != nil {
		return req, unit.InvalidField(join(path, u.Name), "unknown field")
	}
	return req, unit.InvalidField(path, "is not a valid token request")
}

var tokenRequestType = reflect.TypeFor[TokenRequest]()

// tokenRequestOf is decodeTokenRequest without encoding m again, for the
// usual request: every key one of TokenRequest's JSON names, spelled
// exactly, with a value of its field's type. It reports false for anything
// else (a null, another spelling, an unknown key, expires_at, a wrong
// type), and decodeTokenRequest then decodes m through encoding/json, which
// decides and names what is wrong. Data and Mask are copied, as decoding
// would have: the request may be changed without changing m.
func tokenRequestOf(m map[string]any) (TokenRequest, bool) {
	var req TokenRequest
	for k, v := range m {
		ok := true
		switch k {
		case "id":
			req.ID, ok = v.(string)
		case "type":
			req.Type, ok = v.(string)
		case "data":
			req.Data = copyJSON(v)
		case "mask":
			req.Mask = copyJSON(v)
		case "containers":
			req.Containers, ok = stringsOf(v)
		case "search_indexes":
			req.SearchIndexes, ok = stringsOf(v)
		case "fingerprint_expression":
			req.FingerprintExpression, ok = v.(string)
		case "deduplicate_token":
			req.DeduplicateToken, ok = v.(bool)
		case "metadata":
			req.Metadata, ok = stringMapOf(v)
		case "token_intent_id":
			req.TokenIntentID, ok = v.(string)
		default: // expires_at too: time.Time decodes it
			ok = false
		}
		if !ok {
			return TokenRequest{}, false
		}
	}
	return req, true
}

// stringsOf is v as a []string, if it is an array of strings.
func stringsOf(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// stringMapOf is v as a map[string]string, if it is an object of strings.
func stringMapOf(v any) (map[string]string, bool) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(o))
	for k, e := range o {
		if out[k], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// copyJSON copies the objects and arrays of a decoded JSON value.
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

// jsonTypeName names a Go kind the way a JSON user would.
func jsonTypeName(kind string) string {
	switch kind {
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	case "string":
		return "string"
	case "ptr":
		return "date-time string"
	default:
		return "number"
	}
}

// createTree creates the tokens of a prepared tree, in the stable order of
// rewriteJSON so that ids are assigned deterministically.
func (t *txn) createTree(p *principal, tree any) (any, error) {
	return rewriteJSON(tree, "", func(v any, _ string) (any, bool, error) {
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
			if err := t.emitTokenReadRecord(p, existing); err != nil {
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
	if err := t.emitToken(EventTokenCreated, p.Actor(), rec); err != nil {
		return nil, err
	}
	t.count(TokensCreated)
	return t.present(p, rec, PermTokenCreate, presentCreated), nil
}

// createAnswer is the answer of a create that deduplicated to rec (a
// token p reads in clear: findDuplicate looks no further), and the transform
// that shaped its data: the answer the create would have had if it had
// made the token (presentCreated, the transform of p's token:create rule,
// a card or bank account masked), so that one request answers the same
// shape whether it made the token or found it. Answering it as a read
// showed a reveal rule's key the mask the first time and the whole number
// on a repeat.
func (t *txn) createAnswer(p *principal, rec *tokens.Record) (*Token, string) {
	return t.present(p, rec, PermTokenCreate, presentCreated), presentTransform(p, rec, PermTokenCreate)
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
	case !hasCVC(pt.typ, pt.data):
		rec.CVCAt = nil
	case rec.CVCAt == nil || pt.newCVC:
		at := now
		rec.CVCAt = &at
	}
	rec.Indexes = tokenIndexes(ks, rec, pt.search, fpInStore)
}

// tokenIndexes lists the index entries of a token: its fingerprint (when
// fpInStore: a shared store; see tokens_fingerprints.go), search index values and
// metadata (all as keyed MACs, never plaintext), its expiry, and the
// removal of a card's cvc.
func tokenIndexes(ks *barrier.Keys, rec *tokens.Record, search []string, fpInStore bool) []string {
	tid, id := rec.TenantID, rec.ID
	var idx []string
	if rec.Fingerprint != "" && fpInStore {
		idx = append(idx, barrier.Tenant(tid).FingerprintIndex(rec.Fingerprint).Key(id).String())
	}
	for _, s := range search {
		idx = append(idx, searchIndex(ks, tid, s).Key(id).String())
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Metadata)) {
		idx = append(idx, metadataIndex(ks, tid, k, rec.Metadata[k]).Key(id).String())
	}
	if rec.ExpiresAt != nil {
		idx = append(idx, barrier.Tenant(tid).Expiry(*rec.ExpiresAt, kindToken, id).String())
	}
	if rec.CVCAt != nil {
		idx = append(idx, barrier.Tenant(tid).CVCDue(*rec.CVCAt, id).String())
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// fingerprint is the fingerprint of the token's fingerprint value under ks,
// "" when it has none. It is computed once per key set: creating a token
// needs it for the duplicate lookup and for the record.
func (pt *preparedToken) fingerprint(ks *barrier.Keys) string {
	if pt.fpValue == "" {
		return ""
	}
	if pt.fpKeys != ks {
		pt.fp, pt.fpKeys = fingerprintOf(ks, pt.fpValue), ks
	}
	return pt.fp
}

// fingerprintOf is the fingerprint of a value: a keyed MAC, so equal values
// match within a tenant and nothing about the value can be learnt from it.
func fingerprintOf(ks *barrier.Keys, value string) string {
	return hex.EncodeToString(ks.MAC([]byte("fingerprint\x00"), []byte(value)))
}

// kindToken is the record kind of every token type.
const kindToken = tokens.Kind

func searchIndex(ks *barrier.Keys, tid, value string) barrier.Prefix {
	return barrier.Tenant(tid).SearchIndex(hex.EncodeToString(ks.MAC([]byte("search\x00"), []byte(value))))
}

// metadataIndex indexes a metadata entry; values match case-insensitively.
func metadataIndex(ks *barrier.Keys, tid, key, value string) barrier.Prefix {
	m := ks.MAC([]byte("metadata\x00"), []byte(key), []byte{0}, []byte(strings.ToLower(value)))
	return barrier.Tenant(tid).MetadataIndex(hex.EncodeToString(m))
}

// putToken writes a new token record, its index entries and its list
// index entries and counts.
func (t *txn) putToken(rec *tokens.Record) error { return t.writeToken(nil, rec) }

// writeToken writes a token record, its index entries and its list index
// entries and counts. prev is the version it replaces (an update; nil for
// a new token), whose index entries the caller removed: its list entries
// are moved (moveListed), so they are written only when they change.
func (t *txn) writeToken(prev, rec *tokens.Record) error {
	if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(kindToken, rec.ID), rec); err != nil {
		return err
	}
	listed := t.listToken
	if prev != nil {
		listed = func(rec *tokens.Record) error { return t.moveListed(prev, rec) }
	}
	if err := listed(rec); err != nil {
		return err
	}
	t.indexFingerprint(rec)
	for _, k := range rec.Indexes {
		if err := t.PutIndex(barrier.IndexEntry(k)); err != nil {
			return err
		}
	}
	return nil
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
			slices.Equal(slices.Sorted(slices.Values(rec.Containers)), want) && p.MayReadClear(scopeOf(rec)) {
			return rec, nil
		}
	}
	return nil, nil
}

// indexedIDs lists the ids under an index prefix.
func (t *txn) indexedIDs(prefix barrier.Prefix) ([]string, error) {
	var ids []string
	err := t.ScanKeys(prefix, func(_ barrier.Key, id string) error {
		ids = append(ids, id)
		return nil
	})
	sort.Strings(ids)
	return ids, err
}
