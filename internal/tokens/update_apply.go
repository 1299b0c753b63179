package tokens

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Applying an UpdateToken patch (update.go decides what it may read and
// show): CheckPatchFields before the transaction, Patch in it.

// CheckPatchFields refuses a patch's fields that are not a token's or
// that cannot change (id, type), each Invalid at its name.
func CheckPatchFields(fields map[string]any) error {
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
	return fe.Err()
}

// Patch applies the merge patch fields (checked by CheckPatchFields) to
// the live token id that p, holding token:update, updates, and returns it
// as an update answers (PresentUpdated). The token is validated again and
// its fingerprint, mask and indexes recomputed.
//
// Returns NotFound for a token that does not exist, has expired or is
// another tenant's; PermissionDenied without token:update on its
// containers, old and new, for a move to containers where p could read
// more of it, or for expressions over stored data without the reveal
// transform (ErrExpressionsOverStoredData); Invalid with the fields'
// paths.
func (s *Service) Patch(t *unit.Tx, p *access.Principal, id string, fields map[string]any) (*Token, error) {
	rec, transform, err := s.Must(t, p, id, access.PermTokenUpdate)
	if err != nil {
		return nil, err
	}
	// A key that may not read the token, setting an expression with
	// data, replaces the data whole: whether its data covers every
	// stored field would otherwise decide the answer (see
	// ReadsStoredData), telling it what fields are stored.
	replaceData := SetsExpression(fields) && fields["data"] != nil && !p.MayRead(ScopeOf(rec))
	req, err := PatchedRequest(rec, fields, replaceData)
	if err != nil {
		return nil, err
	}
	// Before any expression is evaluated: how a new expression fares
	// over the stored data (an error, or none) would answer a key that
	// may not read it, a digit at a time.
	if ReadsStoredData(fields, req) && transform != access.TransformReveal {
		return nil, ErrExpressionsOverStoredData
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
	if rec.Type == unit.TypeCard && (!sendsData || p.MayReadClear(ScopeOf(rec)) && SameCard(rec.Data, req.Data)) {
		cardsValidOn = time.Time{}
	}
	_, setsMask := fields["mask"]
	pt := s.Prepare(req, t.Now, cardsValidOn, "", setsMask || sendsData, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	scope := access.TokenScope{ID: rec.ID, Containers: pt.Containers}
	moved, ok := p.Decide(access.PermTokenUpdate, scope)
	if !ok {
		return nil, p.DeniedOn(access.PermTokenUpdate, scope)
	}
	if !ReadsNoMore(p, rec, pt.Containers) {
		return nil, unit.Errorf(unit.PermissionDenied, "a token may not be moved to containers where the key could read "+
			"more of it than where it is")
	}
	if ReadsStoredData(fields, req) && moved != access.TransformReveal {
		return nil, ErrExpressionsOverStoredData
	}
	// After the permission checks, as it reads the stored data.
	if setsMask {
		s.Aliases.CheckMaskKeepsID(rec.AliasID, rec.Type, rec.Data, rec.MaskExpression, pt.MaskExpr, fe)
		if err := fe.Err(); err != nil {
			return nil, err
		}
	}
	now := t.Now
	// A patch keeps the token's identity and creation; ApplyTo sets
	// everything the request decides, and the cvc's window is kept
	// below.
	next := &Record{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt,
		Decoy: rec.Decoy, DecoyFreeze: rec.DecoyFreeze,
		AliasID: rec.AliasID}
	if at, ok := CVCWrittenAt(rec); ok {
		next.CVCAt = &at // the stored cvc's window goes on
	}
	next.ModifiedBy, next.ModifiedAt = p.ActorID, &now
	patchData, _ := fields["data"].(map[string]any)
	pt.NewCVC = patchData[CVCField] != nil
	if err := s.rewrite(t, rec, next, pt); err != nil {
		return nil, err
	}
	out := Present(p, next, access.PermTokenUpdate, PresentUpdated)
	// The answer shows the stored data where the update rule reveals it:
	// a reveal as a read's, held to the circuit breaker.
	if out.Data != nil {
		shown, err := s.gate(t, p, next.ID, PresentTransform(p, next, access.PermTokenUpdate))
		if err != nil {
			return nil, err
		}
		if shown == access.TransformMask {
			out.Data, out.Fingerprint = out.Mask, ""
		}
	}
	s.decoyRead(t, p, next)
	s.count(t, CountUpdated)
	if err := Emit(t, events.TokenUpdated, p.Actor(), next); err != nil {
		return nil, err
	}
	return out, t.Log(p.Actor(), p.TenantID, next.Type, next.ID, unit.OpUpdate, "Token updated")
}

// rewrite replaces rec by next, a new version of it that pt decides:
// rec's index entries and fingerprint go, next's are written.
func (s *Service) rewrite(t *unit.Tx, rec, next *Record, pt *Prepared) error {
	ks, err := t.TenantKeys(rec.TenantID, false)
	if err != nil {
		return err
	}
	for _, k := range rec.Indexes {
		if err := t.Delete(barrier.IndexEntry(k)); err != nil {
			return err
		}
	}
	pt.ApplyTo(next, ks, t.Now, s.Fingerprints == nil)
	UnindexFingerprint(t, s.Fingerprints, rec)
	return s.Write(t, rec, next)
}
