package tokenvault

import (
	"context"
	"encoding/json"
	"time"

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
			checkMaskKeepsID(rec, pt.maskExpr, fe)
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
