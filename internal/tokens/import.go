package tokens

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ImportOutcome is what Service.Import did with one prepared line.
type ImportOutcome int

const (
	// Imported: the token was created, keeping its id and created_at.
	Imported ImportOutcome = iota
	// Skipped: a live token of the id exists and is the same token (a
	// resumed import sending a committed line again); nothing written.
	Skipped
)

// Import creates the token of one imported line through Create (the path
// of every create: its record, indexes, fingerprint, mask, list entries,
// audit line and event), keeping its literal id and pt.CreatedAt. A live
// token of the id that is the same token (SameAsImported) is Skipped and
// nothing is written. Everything that refuses the line is checked before
// anything is written, so that the caller may reject the line and carry
// on in the same transaction.
//
// Returns PermissionDenied without token:create on the token's
// containers, Conflict for a live token of the id that differs, or a
// store error (which must abort the transaction).
func (s *Service) Import(t *unit.Tx, p *access.Principal, pt *Prepared) (ImportOutcome, error) {
	if _, ok := p.Decide(access.PermTokenCreate, access.TokenScope{ID: pt.ID, Containers: pt.Containers}); !ok {
		return 0, unit.Forbidden(access.PermTokenCreate)
	}
	old, err := s.Load(t, p.TenantID, pt.ID, true)
	if err != nil {
		return 0, err
	}
	if old != nil && !old.Expired(t.Now) {
		if SameAsImported(old, pt) {
			return Skipped, nil
		}
		return 0, unit.Errorf(unit.Conflict, "id exists")
	}
	// An expired token of the id is replaced by Create, as a create
	// replaces it; with none, Create need not look it up again.
	pt.absent = old == nil
	if _, err := s.Create(t, p, pt); err != nil {
		return 0, err
	}
	return Imported, nil
}

// SameAsImported reports whether rec is the token pt would create: the
// same type, data, mask expression, containers, metadata, search
// indexes, fingerprint expression, expiry and (when pt keeps one)
// creation time. The fingerprint and the evaluated mask follow from
// these.
func SameAsImported(rec *Record, pt *Prepared) bool {
	if rec.Type != pt.Type || !bytes.Equal(rec.Data, pt.DataJSON) ||
		rec.FingerprintExpression != pt.FPExpr ||
		!slices.Equal(rec.Containers, pt.Containers) ||
		!slices.Equal(rec.SearchIndexes, pt.SearchExprs) ||
		!maps.Equal(rec.Metadata, pt.Metadata) {
		return false
	}
	if (rec.ExpiresAt == nil) != (pt.ExpiresAt == nil) ||
		rec.ExpiresAt != nil && !rec.ExpiresAt.Equal(*pt.ExpiresAt) {
		return false
	}
	if pt.CreatedAt != nil && !rec.CreatedAt.Equal(*pt.CreatedAt) {
		return false
	}
	var maskExpr []byte
	if pt.Mask != nil {
		maskExpr, _ = json.Marshal(pt.MaskExpr)
	}
	return bytes.Equal(rec.MaskExpression, maskExpr)
}
