package tokens

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/aliases"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Prepared is a validated token request: everything that can be computed
// without the store, so that a transaction only looks up and writes
// (Service.Create). Service.Prepare makes it.
type Prepared struct {
	// Plain is a plain value of a Tokenize body: the response is the id
	// alone.
	Plain bool
	// ID is a literal id; "" for a generated one or an alias.
	ID string
	// Alias draws the id of an alias expression in the transaction.
	Alias *aliases.ID
	// Type is the token's type.
	Type string
	// Data is the validated data, and DataJSON its JSON.
	Data     any
	DataJSON []byte
	// Mask is the evaluated mask, and MaskExpr its expression.
	Mask     any
	MaskExpr any
	// Containers, Metadata and SearchExprs are the request's, checked.
	Containers  []string
	Metadata    map[string]string
	SearchExprs []string
	// Search are the evaluated search index values.
	Search []string
	// FPExpr is the fingerprint expression, and FPValue the value it
	// fingerprints; empty means none.
	FPExpr  string
	FPValue string
	// Dedupe asks for an existing token with the same fingerprint.
	Dedupe bool
	// Decoy and DecoyFreeze make the new token a decoy (Record.Decoy):
	// set by the root's CreateDecoy only.
	Decoy, DecoyFreeze bool
	ExpiresAt          *time.Time
	// NewCVC: the request sends a card's cvc (a patch that does not keeps
	// the stored cvc's retention window).
	NewCVC bool
	// IDTmpl is an id derived with the fpe filter (Aliases.DeriveFPEID),
	// evaluated over IDVars in the transaction, with the tenant's key;
	// IDPath is where its problems are reported.
	IDTmpl *expr.Template
	IDVars expr.Resolver
	IDPath string
	// Intent, when set, is a token intent conversion whose type and data
	// are read in the transaction (convert.go).
	Intent *Conversion
	// Subject is the request's data subject, checked ("" for none).
	Subject string
	// CreatedAt, when set, is the creation time the token keeps (an
	// import keeps its source's; see import.go); nil means the
	// transaction's time.
	CreatedAt *time.Time

	// absent: Import found no token of ID, live or expired, in this
	// transaction, so Create need not look again.
	absent bool

	fp     string        // FPValue's fingerprint under fpKeys (see Fingerprint)
	fpKeys *barrier.Keys // the keys fp was computed with
}

// Prepare validates req, reporting problems under path, and computes its
// mask, fingerprint value and search index values. A card must not have
// expired by cardsValidOn (zero: not checked; see Patch). The mask and
// id are held to the display rule (Aliases.CheckDisplay) only with
// checkShown: a patch that changes neither the mask nor the data leaves a
// token as it was judged.
func (s *Service) Prepare(req Request, now, cardsValidOn time.Time, path string, checkShown bool, fe unit.FieldErrors) *Prepared {
	pt := &Prepared{
		ID: req.ID, Type: req.Type, Metadata: req.Metadata, SearchExprs: req.SearchIndexes,
		FPExpr: req.FingerprintExpression, Dedupe: req.DeduplicateToken, ExpiresAt: req.ExpiresAt,
		NewCVC: true, Subject: req.Subject,
	}
	join := jsontext.Field
	if req.Subject != "" {
		ValidateSubject(req.Subject, join(path, "subject"), fe)
	}
	if req.ID != "" && !aliases.IsExpression(req.ID) {
		ValidateCustomID(req.ID, join(path, "id"), fe)
	}
	if req.TokenIntentID != "" {
		pt.Intent = prepareConversion(req, now, path, fe)
		return pt
	}
	idTmpl := s.Aliases.ParseIDExpression(req.ID, join(path, "id"), fe)
	fpeID := idTmpl != nil && idTmpl.EndsInFPE()
	if fpeID {
		pt.IDTmpl, pt.IDPath = idTmpl, join(path, "id")
	}
	if !slices.Contains(Types, req.Type) {
		fe.Add(join(path, "type"), "must be one of %s", strings.Join(Types, ", "))
		return pt
	}
	data, err := jsontext.AsPlain(req.Data)
	if err != nil {
		fe.Add(join(path, "data"), "is not JSON")
		return pt
	}
	pt.Data = ValidateData(req.Type, data, cardsValidOn, join(path, "data"), fe)
	pt.DataJSON, _ = json.Marshal(pt.Data)

	pt.Containers = ValidateContainers(req.Containers, req.Type, join(path, "containers"), fe)
	ValidateMetadata(req.Metadata, join(path, "metadata"), fe)
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	if len(fe) > 0 {
		// Expressions are evaluated over valid data only.
		return pt
	}
	// A card's cvc is kept only for Options.Retention.CVC: nothing derived
	// from it (mask, fingerprint, search index) may outlive it.
	vars := expr.Vars(map[string]any{"data": ExprData(req.Type, pt.Data)})
	if pt.IDTmpl != nil {
		pt.IDVars = s.Aliases.FPEIDVars(req.Type, pt.Data, req.Metadata)
	}

	if pt.FPExpr == "" {
		pt.FPExpr = DefaultFingerprint[req.Type]
	}
	if v, ok := EvalExpression(pt.FPExpr, vars, join(path, "fingerprint_expression"), fe); ok {
		pt.FPValue = Stringify(v)
	}

	pt.MaskExpr = req.Mask
	if pt.MaskExpr == nil {
		pt.MaskExpr = DefaultMask[req.Type]
	}
	if pt.MaskExpr != nil {
		maskExpr, err := jsontext.AsPlain(pt.MaskExpr)
		if err != nil {
			fe.Add(join(path, "mask"), "is not JSON")
		} else {
			pt.MaskExpr = maskExpr
			pt.Mask = EvalMask(maskExpr, vars, join(path, "mask"), fe)
		}
	}

	if idTmpl != nil && !fpeID {
		pt.ID = ""
		pt.Alias = s.Aliases.Prepare(idTmpl, vars, join(path, "id"), fe)
	}
	if len(fe) == 0 && checkShown && (req.Mask != nil || idTmpl != nil) {
		// What the mask and the id show, by the flow analysis of their
		// expressions (internal/aliases, display.go). A type's default mask
		// with a generated or literal id needs no analysis per call: the
		// defaults are the vault's own, held to the rule by
		// TestDefaultMasksKeepTheDisplayRule, and the analysis is most of
		// a card tokenize's allocations.
		s.Aliases.CheckDisplay(req.Type, pt.Data, req.Metadata, pt.MaskExpr, idTmpl, join(path, "mask"), join(path, "id"), fe)
	}

	if len(req.SearchIndexes) > MaxSearchIndexes {
		fe.Add(join(path, "search_indexes"), "must hold at most %d expressions", MaxSearchIndexes)
	}
	for i, src := range req.SearchIndexes {
		p := fmt.Sprintf("%s[%d]", join(path, "search_indexes"), i)
		v, ok := EvalExpression(src, vars, p, fe)
		if !ok {
			continue
		}
		switch v.(type) {
		case string, json.Number, bool:
			s := Stringify(v)
			if s == "" {
				fe.Add(p, "gives an empty value")
				continue
			}
			pt.Search = append(pt.Search, s)
		default:
			fe.Add(p, "must give one value, not an object, array or nothing")
		}
	}
	return pt
}

// PrepareTree validates a Tokenize body (decoded by DecodeBody), returning
// the same structure with every value to tokenize replaced by a
// *Prepared, and counting them in count.
func (s *Service) PrepareTree(root any, now time.Time, fe unit.FieldErrors, count *int) any {
	tree, _ := Walk(root, "", func(v any, path string) (any, bool, error) {
		switch x := v.(type) {
		case nil:
			return nil, true, nil
		case map[string]any:
			if !IsRequest(x) {
				return nil, false, nil
			}
			*count++
			req, err := DecodeRequest(x, path)
			if err != nil {
				maps.Copy(fe, err.Fields)
				return nil, true, nil
			}
			return s.Prepare(req, now, now, path, true, fe), true, nil
		case []any:
			return nil, false, nil
		}
		*count++
		pt := s.Prepare(Request{Type: unit.TypeToken, Data: v}, now, now, path, true, fe)
		pt.Plain = true
		return pt, true, nil
	})
	return tree
}

// ApplyTo sets everything of rec that the request decides: data, mask,
// placement, metadata, expressions, fingerprint, when a card's cvc was
// written, and the index and schedule entries that follow from them.
func (pt *Prepared) ApplyTo(rec *Record, ks *barrier.Keys, now time.Time, fpInStore bool) {
	rec.Containers, rec.Metadata, rec.SearchIndexes = pt.Containers, pt.Metadata, pt.SearchExprs
	rec.Subject = pt.Subject
	rec.FingerprintExpression, rec.DeduplicateToken, rec.ExpiresAt = pt.FPExpr, pt.Dedupe, pt.ExpiresAt
	rec.Fingerprint = pt.Fingerprint(ks)
	rec.Data = pt.DataJSON
	rec.Mask, rec.MaskExpression = nil, nil
	if pt.Mask != nil {
		rec.Mask, _ = json.Marshal(pt.Mask)
		rec.MaskExpression, _ = json.Marshal(pt.MaskExpr)
	}
	switch {
	case !HasCVC(pt.Type, pt.Data):
		rec.CVCAt = nil
	case rec.CVCAt == nil || pt.NewCVC:
		at := now
		rec.CVCAt = &at
	}
	rec.Indexes = Indexes(ks, rec, pt.Search, fpInStore)
}

// Fingerprint is the fingerprint of the token's fingerprint value under
// ks, "" when it has none. It is computed once per key set: creating a
// token needs it for the duplicate lookup and for the record.
func (pt *Prepared) Fingerprint(ks *barrier.Keys) string {
	if pt.FPValue == "" {
		return ""
	}
	if pt.fpKeys != ks {
		pt.fp, pt.fpKeys = FingerprintOf(ks, pt.FPValue), ks
	}
	return pt.fp
}
