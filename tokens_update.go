package tokenvault

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

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
		// readsStoredData), telling it what fields are stored.
		replaceData := setsExpression(fields) && fields["data"] != nil && !p.MayRead(scopeOf(rec))
		req, err := patchedRequest(rec, fields, replaceData)
		if err != nil {
			return err
		}
		// Before any expression is evaluated: how a new expression fares
		// over the stored data (an error, or none) would answer a key that
		// may not read it, a digit at a time.
		if readsStoredData(fields, req) && transform != TransformReveal {
			return errExpressionsOverStoredData
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
		if rec.Type == TypeCard && (!sendsData || p.MayReadClear(scopeOf(rec)) && sameCard(rec.Data, req.Data)) {
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
		if !readsNoMore(p, rec, pt.containers) {
			return unit.Errorf(PermissionDenied, "a token may not be moved to containers where the key could read "+
				"more of it than where it is")
		}
		if readsStoredData(fields, req) && moved != TransformReveal {
			return errExpressionsOverStoredData
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
		if at, ok := cvcWrittenAt(rec); ok {
			next.CVCAt = &at // the stored cvc's window goes on
		}
		next.ModifiedBy, next.ModifiedAt = p.ActorID, &now
		patchData, _ := fields["data"].(map[string]any)
		pt.newCVC = patchData[cvcField] != nil
		pt.applyTo(next, ks, t.Now, t.v.fingerprints == nil)
		t.unindexFingerprint(rec)
		if err := t.writeToken(rec, next); err != nil {
			return err
		}
		out = t.present(p, next, PermTokenUpdate, presentUpdated)
		t.count(TokensUpdated)
		if err := t.emitToken(EventTokenUpdated, p.Actor(), next); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, next.Type, next.ID, OpUpdate, "Token updated")
	})
	return out, err
}

// errExpressionsOverStoredData refuses new expressions over data the
// patch does not replace to a key without token:update with reveal, where
// the token is and where it goes.
var errExpressionsOverStoredData = unit.Errorf(PermissionDenied, "changing the mask, search indexes or fingerprint "+
	"expression of data the patch does not replace needs token:update with the reveal transform: the new "+
	"expressions would show the stored data")

// patchedRequest rebuilds the token request of rec with fields merged in,
// so the patched token is validated exactly like a new one. With
// replaceData, the patch's data replaces the stored data instead of being
// merged into it.
func patchedRequest(rec *tokens.Record, fields map[string]any, replaceData bool) (TokenRequest, error) {
	data, _ := decodeJSONLastWins(rec.Data)
	var maskExpr any
	if len(rec.MaskExpression) > 0 {
		maskExpr, _ = decodeJSON(rec.MaskExpression)
	}
	metadata := map[string]any{}
	for k, v := range rec.Metadata {
		metadata[k] = v
	}
	cur := map[string]any{
		"type":                   rec.Type,
		"data":                   data,
		"containers":             rec.Containers,
		"search_indexes":         rec.SearchIndexes,
		"fingerprint_expression": rec.FingerprintExpression,
		"deduplicate_token":      rec.DeduplicateToken,
	}
	if maskExpr != nil {
		cur["mask"] = maskExpr
	}
	if len(metadata) > 0 {
		cur["metadata"] = metadata
	}
	if rec.ExpiresAt != nil {
		cur["expires_at"] = rec.ExpiresAt.Format(time.RFC3339Nano)
	}
	merged := maps.Clone(cur)
	for k, v := range fields {
		switch k {
		case "data", "mask", "metadata":
			switch {
			case v == nil:
				delete(merged, k)
			case k == "data" && replaceData:
				merged[k] = mergePatch(nil, v)
			default:
				merged[k] = mergePatch(cur[k], v)
			}
		default:
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
	}
	if _, ok := merged["data"]; !ok {
		return TokenRequest{}, unit.InvalidField("data", "cannot be removed")
	}
	req, e := decodeTokenRequest(merged, "")
	if e != nil {
		return req, e
	}
	req.Containers = slices.Clone(req.Containers)
	return req, nil
}

// sameCard reports whether the card data next has the number, expiration
// month and year of the stored data prev.
func sameCard(prev json.RawMessage, next any) bool {
	old, _ := decodeJSON(prev)
	o, ok1 := old.(map[string]any)
	n, ok2 := next.(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	for _, f := range []string{"number", "expiration_month", "expiration_year"} {
		if o[f] == nil || fmt.Sprint(o[f]) != fmt.Sprint(n[f]) {
			return false
		}
	}
	return true
}

// readsStoredData reports whether a patch sets an expression (mask,
// search_indexes, fingerprint_expression) that will be evaluated over
// stored data it does not itself replace. Its results reach the caller
// (the mask in the answer, the fingerprint, search hits), so such a patch
// would read the data through a key that may not see it.
func readsStoredData(fields map[string]any, req TokenRequest) bool {
	if !setsExpression(fields) {
		return false
	}
	given, ok := fields["data"]
	return !ok || given == nil || !reflect.DeepEqual(mergePatch(nil, given), req.Data)
}

// readsNoMore reports whether p's token:read access to the token rec moved
// to containers is no wider than its access where rec is: token:update on
// both places must not let a key move a token it may not read (or may read
// only masked) to where it may.
func readsNoMore(p *principal, rec *tokens.Record, containers []string) bool {
	rank := func(containers []string) int {
		tr, ok := p.Decide(PermTokenRead, tokenScope{ID: rec.ID, Containers: containers})
		if !ok {
			return -1
		}
		return access.TransformRank(tr)
	}
	return rank(containers) <= rank(rec.Containers)
}

// setsExpression reports whether a patch sets an expression evaluated
// over the data: mask, search_indexes or fingerprint_expression.
func setsExpression(fields map[string]any) bool {
	for _, k := range []string{"mask", "search_indexes", "fingerprint_expression"} {
		if _, ok := fields[k]; ok {
			return true
		}
	}
	return false
}
