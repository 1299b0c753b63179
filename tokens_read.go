package tokenvault

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// loadToken reads a token, without a cvc past its retention (see tokens_cvc.go).
// It returns nil for a missing token and, unless withExpired, for one past
// its expires_at.
func (t *txn) loadToken(tid, id string, withExpired bool) (*tokens.Record, error) {
	if !validTokenID(id) {
		return nil, nil
	}
	var rec tokens.Record
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(kindToken, id), &rec)
	if err != nil || !ok {
		return nil, err
	}
	t.hideStaleCVC(&rec)
	if !withExpired && rec.Expired(t.Now) {
		return nil, nil
	}
	return &rec, nil
}

// validTokenID reports whether id can name a token: a UUID or a custom id.
func validTokenID(id string) bool { return customIDProblem(id) == "" }

// mustToken loads a live token the caller may use with perm, and the
// transform that applies. Unknown and expired tokens are NotFound; a token
// the caller's rules do not reach is PermissionDenied.
func (t *txn) mustToken(p *principal, id, perm string) (*tokens.Record, string, error) {
	rec, err := t.loadToken(p.TenantID, id, false)
	if err != nil {
		return nil, "", err
	}
	if rec == nil {
		return nil, "", unit.NotFoundError("token")
	}
	transform, ok := p.Decide(perm, scopeOf(rec))
	if !ok {
		return nil, "", unit.Forbidden(perm)
	}
	return rec, transform, nil
}

// presentation says what a token response is about, which decides what a
// caller that may not read the token (see mayRead) is shown.
type presentation int

const (
	// presentCreated: a token just built from the caller's own request,
	// or the one a deduplicating create found instead (only ever a token
	// the caller reads in clear; createAnswer). A caller that may not read it
	// gets everything of its own request back (the mask of its own value
	// included) but the fingerprint, which could be matched against other
	// tokens' fingerprints; so does one that reads it only masked or
	// redacted (see mayReadClear).
	presentCreated presentation = iota
	// presentUpdated: a stored token the caller changed. A caller that may
	// not read it learns nothing of its stored content: no data, mask,
	// fingerprint, fingerprint expression, metadata or search indexes.
	presentUpdated
)

// present shapes a token for a caller using perm: data revealed, masked or
// removed by the transform that applies (redacted when perm does not reach
// the token). Create and update responses never reveal a card or bank
// account: they carry the mask. A caller that may not read the token is
// shown only what the presentation allows.
func (t *txn) present(p *principal, rec *tokens.Record, perm string, what presentation) *Token {
	tok := tokenOf(rec, presentTransform(p, rec, perm))
	if !p.MayReadClear(scopeOf(rec)) {
		tok.Fingerprint = ""
	}
	if what != presentCreated && !p.MayRead(scopeOf(rec)) {
		tok.withholdContent()
	}
	return tok
}

// presentTransform is the transform present shapes rec's data with for
// p under perm: p's rule there (redact without one), and a mask instead
// of reveal for any type but a plain token, since an answer to a write
// never shows a card or bank account whole.
func presentTransform(p *principal, rec *tokens.Record, perm string) string {
	transform, ok := p.Decide(perm, scopeOf(rec))
	if !ok {
		return TransformRedact
	}
	if transform == TransformReveal && rec.Type != TypeToken {
		return TransformMask
	}
	return transform
}

// withholdContent removes everything of a token that depends on its data
// or was chosen by whoever wrote it, keeping its identity and placement:
// id, tenant, type, containers, expiry, timestamps and actors.
func (tok *Token) withholdContent() {
	tok.Data, tok.Mask, tok.Fingerprint, tok.FingerprintExpression = nil, nil, "", ""
	tok.Metadata, tok.SearchIndexes = nil, nil
}

// tokenOf builds the API's Token from the record, its data shaped by
// transform: revealed, masked (the evaluated mask) or left out. It is the
// one place the record's shape meets Token's (TestTokenRecordFields holds
// both to it), called once per token of an answer, which is when Data and
// Mask are decoded from their JSON text. The token has containers of its
// own; its metadata, search indexes and times are the record's, not copies.
func tokenOf(r *tokens.Record, transform string) *Token {
	tok := &Token{
		ID:                    r.ID,
		TenantID:              r.TenantID,
		Type:                  r.Type,
		Fingerprint:           r.Fingerprint,
		FingerprintExpression: r.FingerprintExpression,
		Containers:            slices.Clone(r.Containers),
		Metadata:              r.Metadata,
		SearchIndexes:         r.SearchIndexes,
		DeduplicateToken:      r.DeduplicateToken,
		ExpiresAt:             r.ExpiresAt,
		CreatedBy:             r.CreatedBy,
		CreatedAt:             r.CreatedAt,
		ModifiedBy:            r.ModifiedBy,
		ModifiedAt:            r.ModifiedAt,
	}
	if len(r.Mask) > 0 {
		tok.Mask = decodeStoredJSON(r.Mask)
	}
	switch transform {
	case TransformReveal:
		tok.Data = decodeStoredJSON(r.Data)
	case TransformMask:
		tok.Data = tok.Mask
	}
	return tok
}

// tokenValue is the value a detokenization expression inserts: api's Data,
// without building the rest of the token.
func tokenValue(r *tokens.Record, transform string) any {
	var raw json.RawMessage
	switch transform {
	case TransformReveal:
		raw = r.Data
	case TransformMask:
		raw = r.Mask
	}
	if len(raw) == 0 {
		return nil
	}
	return decodeStoredJSON(raw)
}

// decodeStoredJSON decodes a record's data or mask, nil if it cannot. Most
// data is one string: a string with nothing to unescape is taken as it
// is, which is what decoding it would give, without a decoder.
func decodeStoredJSON(b []byte) any {
	if s, ok := plainJSONString(b); ok {
		return s
	}
	v, _ := decodeJSONLastWins(b)
	return v
}

// plainJSONString returns the string JSON text b encodes, if b is a string
// with no escape, no control character and valid UTF-8.
func plainJSONString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
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
		out = tokenOf(rec, transform)
		if transform != TransformReveal {
			out.Fingerprint = "" // equality with the data: only for who sees it
		}
		t.count(TokensRead)
		if err := t.emitTokenReadRecord(p, rec); err != nil {
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

// deleteToken removes a token, its index entries, its list index entries
// and count, and its schedule, and logs it.
func (t *txn) deleteToken(by actor, rec *tokens.Record, msg string) error {
	if err := t.Delete(barrier.Tenant(rec.TenantID).Record(kindToken, rec.ID)); err != nil {
		return err
	}
	if err := t.v.lists.Unlist(t.Tx, rec); err != nil {
		return err
	}
	t.unindexFingerprint(rec)
	for _, k := range rec.Indexes {
		if err := t.Delete(barrier.IndexEntry(k)); err != nil {
			return err
		}
	}
	if err := t.emitTokenDeleted(by, rec); err != nil {
		return err
	}
	return t.Log(by, rec.TenantID, rec.Type, rec.ID, OpDelete, msg)
}

// logReads logs the read of every token of a page that carries data: a
// list or a search shows data as GetToken does, and is audited as it is,
// with the transform p's perm applied and the channel.
func (t *txn) logReads(p *principal, perm string, toks []Token, msg, channel string) error {
	for _, tok := range toks {
		if tok.Data == nil {
			continue // redacted: nothing of the token's data was read
		}
		transform, ok := p.Decide(perm, tokenScope{ID: tok.ID, Containers: tok.Containers})
		if !ok {
			transform = TransformRedact
		}
		if err := t.logTokenRead(p, tok.Type, tok.ID, msg, transform, channel); err != nil {
			return err
		}
		if err := t.emitTokenRead(p, &tok); err != nil {
			return err
		}
		t.count(TokensRead)
	}
	return nil
}

// queryTokens returns the live tokens matching q that p may use with perm,
// oldest first, for a query with an exact-value filter (ids, fingerprint,
// metadata, search): it reads that filter's index, and costs what the
// filter matches. A query without one is tokenList's walk of a list index
// (listing.Page), never a scan: here it is an internal error.
func (t *txn) queryTokens(p *principal, perm string, q listing.Query) ([]Token, error) {
	tid := p.TenantID
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	var candidates []string // nil: every token
	narrow := func(ids []string, err error) error {
		if err != nil {
			return err
		}
		if candidates == nil {
			candidates = ids
		} else {
			// indexedIDs and fingerprintIDs return sorted ids.
			candidates = slices.DeleteFunc(candidates, func(id string) bool {
				_, found := slices.BinarySearch(ids, id)
				return !found
			})
		}
		if candidates == nil {
			candidates = []string{}
		}
		return nil
	}
	if q.IDs != nil {
		candidates = slices.Compact(slices.Sorted(slices.Values(q.IDs)))
	}
	if q.Fingerprint != "" {
		if err := narrow(t.fingerprintIDs(tid, q.Fingerprint)); err != nil {
			return nil, err
		}
	}
	for k, val := range q.Metadata {
		if err := narrow(t.indexedIDs(metadataIndex(ks, tid, k, val))); err != nil {
			return nil, err
		}
	}
	for _, s := range q.Search {
		if err := narrow(t.indexedIDs(searchIndex(ks, tid, s))); err != nil {
			return nil, err
		}
	}

	if candidates == nil {
		// tokenList walks a list index for such a query: never a scan.
		return nil, fmt.Errorf("tokenvault: queryTokens without an exact-value filter")
	}
	var recs []*tokens.Record
	for _, id := range slices.Compact(slices.Sorted(slices.Values(candidates))) {
		rec, err := t.loadToken(tid, id, false)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	// Ids are time-ordered, custom ids are not: order by creation.
	slices.SortStableFunc(recs, func(a, b *tokens.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })

	var out []Token
	for _, rec := range recs {
		if rec.Expired(t.Now) || !q.Matches(rec) {
			continue
		}
		if tok := shapeListed(p, perm, q, rec); tok != nil {
			out = append(out, *tok)
		}
	}
	return out, nil
}
