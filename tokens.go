package tokenvault

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The token types.
const (
	TypeToken = unit.TypeToken
	TypeCard  = unit.TypeCard
	TypeBank  = unit.TypeBank
)

// TokenRequest asks for one token (see tokens.Request for its fields). In
// a Tokenize body, an object is a token request when it has a "type"
// naming a token type and a "data" property; any other object is walked
// as plain structure.
type TokenRequest = tokens.Request

// Token is a token as returned to a caller, its data shaped by the
// caller's access (see tokens.Token).
type Token = tokens.Token

// The token feature is internal/tokens. These are its names as the
// features still in this package (intents, aliases, lists, reactors) call
// them; each goes when its callers have moved.
var (
	tokenTypes       = tokens.Types
	defaultContainer = tokens.DefaultContainer
	defaultTemplates = tokens.DefaultTemplates
	tokenizeBody     = tokens.DecodeBody
	tokenOf          = tokens.TokenOf
	scopeOf          = tokens.ScopeOf
	stringify        = tokens.Stringify
	exprData         = tokens.ExprData
	evalMask         = tokens.EvalMask
	customIDProblem  = tokens.CustomIDProblem
	validateMetadata = tokens.ValidateMetadata
	metadataIndex    = tokens.MetadataIndex
	patchedRequest   = tokens.PatchedRequest
)

const (
	kindToken          = tokens.Kind
	maxExpressionBytes = tokens.MaxExpressionBytes
)

func (t *txn) emitToken(typ string, by actor, rec *tokens.Record) error {
	return tokens.Emit(t.Tx, typ, by, rec)
}

func (t *txn) loadToken(tid, id string, withExpired bool) (*tokens.Record, error) {
	return t.v.tokens.Load(t.Tx, tid, id, withExpired)
}

func (t *txn) mustToken(p *principal, id, perm string) (*tokens.Record, string, error) {
	return t.v.tokens.Must(t.Tx, p, id, perm)
}

func (t *txn) present(p *principal, rec *tokens.Record, perm string, what tokens.Presentation) *Token {
	return tokens.Present(p, rec, perm, what)
}

func (t *txn) putToken(rec *tokens.Record) error { return t.v.tokens.Put(t.Tx, rec) }

func (t *txn) writeToken(prev, rec *tokens.Record) error { return t.v.tokens.Write(t.Tx, prev, rec) }

func (t *txn) deleteToken(by actor, rec *tokens.Record, msg string) error {
	return t.v.tokens.Delete(t.Tx, by, rec, msg)
}

func (v *Vault) cvcDue(rec *tokens.Record, now time.Time) bool { return v.tokens.CVCDue(rec, now) }

// tokenLists is the token lists' bookkeeping (tokens_lists.go) as
// internal/tokens calls it on every token write.
type tokenLists struct{ v *Vault }

func (l tokenLists) List(t *unit.Tx, rec *tokens.Record) error {
	return (&txn{Tx: t, v: l.v}).listToken(rec)
}

func (l tokenLists) Move(t *unit.Tx, prev, rec *tokens.Record) error {
	return (&txn{Tx: t, v: l.v}).moveListed(prev, rec)
}

func (l tokenLists) Unlist(t *unit.Tx, rec *tokens.Record) error {
	return (&txn{Tx: t, v: l.v}).unlistToken(rec)
}

func (t *txn) fingerprintIDs(tid, fp string) ([]string, error) {
	return tokens.FingerprintIDs(t.Tx, t.v.fingerprints, tid, fp)
}

func (t *txn) indexFingerprint(rec *tokens.Record) {
	tokens.IndexFingerprint(t.Tx, t.v.fingerprints, rec)
}

func (t *txn) unindexFingerprint(rec *tokens.Record) {
	tokens.UnindexFingerprint(t.Tx, t.v.fingerprints, rec)
}

func (t *txn) indexedIDs(prefix barrier.Prefix) ([]string, error) {
	return tokens.IndexedIDs(t.Tx, prefix)
}

func (t *txn) emitTokenReadRecord(p *principal, rec *tokens.Record) error {
	return tokens.EmitReadRecord(t.Tx, p, rec)
}

// preparedToken is a validated token request: everything that can be
// computed without the store, so a transaction only looks up and writes.
type preparedToken struct {
	plain       bool   // a plain value: the response is the id alone
	id          string // a literal id; "" for a generated one or an alias
	alias       *aliasID
	typ         string
	data        any
	dataJSON    []byte
	mask        any // evaluated
	maskExpr    any
	containers  []string
	metadata    map[string]string
	searchExprs []string
	search      []string // evaluated search index values
	fpExpr      string
	fpValue     string // the value fingerprinted; empty means none
	fp          string // fpValue's fingerprint under fpKeys (see fingerprint)
	fpKeys      *barrier.Keys
	dedupe      bool
	expiresAt   *time.Time
	// newCVC: the request sends a card's cvc (a patch that does not keeps
	// the stored cvc's retention window).
	newCVC bool
	// idTmpl is an id derived with the fpe filter (tokens_fpe.go),
	// evaluated over idVars in the transaction, with the tenant's key.
	idTmpl *expr.Template
	idVars expr.Resolver
	idPath string
	// intent, when set, is a token intent conversion whose type and data
	// are read in the transaction (intents_convert.go): req and path are
	// the request and its path, prepared again there with them.
	intent *intentConversion
}

// prepareToken validates req, reporting problems under path, and computes
// its mask, fingerprint value and search index values. A card must not
// have expired by cardsValidOn (zero: not checked; see UpdateToken).
func prepareToken(req TokenRequest, now, cardsValidOn time.Time, path string, fe unit.FieldErrors) *preparedToken {
	return prepareTokenShown(req, now, cardsValidOn, path, true, fe)
}

// prepareTokenShown is prepareToken, holding the mask and id to the
// display rule (checkDisplay) only with checkShown: a patch that changes
// neither the mask nor the data leaves a token as it was judged.
func prepareTokenShown(req TokenRequest, now, cardsValidOn time.Time, path string, checkShown bool, fe unit.FieldErrors) *preparedToken {
	pt := &preparedToken{
		id: req.ID, typ: req.Type, metadata: req.Metadata, searchExprs: req.SearchIndexes,
		fpExpr: req.FingerprintExpression, dedupe: req.DeduplicateToken, expiresAt: req.ExpiresAt,
		newCVC: true,
	}
	if req.ID != "" && !isAliasExpression(req.ID) {
		tokens.ValidateCustomID(req.ID, join(path, "id"), fe)
	}
	if req.TokenIntentID != "" {
		pt.intent = prepareConversion(req, now, path, fe)
		return pt
	}
	idTmpl := parseIDExpression(req.ID, join(path, "id"), fe)
	fpeID := idTmpl != nil && idTmpl.EndsInFPE()
	if fpeID {
		pt.idTmpl, pt.idPath = idTmpl, join(path, "id")
	}
	if !slices.Contains(tokens.Types, req.Type) {
		fe.Add(join(path, "type"), "must be one of %s", strings.Join(tokens.Types, ", "))
		return pt
	}
	data, err := jsontext.AsPlain(req.Data)
	if err != nil {
		fe.Add(join(path, "data"), "is not JSON")
		return pt
	}
	pt.data = tokens.ValidateData(req.Type, data, cardsValidOn, join(path, "data"), fe)
	pt.dataJSON, _ = json.Marshal(pt.data)

	pt.containers = tokens.ValidateContainers(req.Containers, req.Type, join(path, "containers"), fe)
	tokens.ValidateMetadata(req.Metadata, join(path, "metadata"), fe)
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	if len(fe) > 0 {
		// Expressions are evaluated over valid data only.
		return pt
	}
	// A card's cvc is kept only for Options.Retention.CVC: nothing derived
	// from it (mask, fingerprint, search index) may outlive it.
	vars := expr.Vars(map[string]any{"data": tokens.ExprData(req.Type, pt.data)})
	if pt.idTmpl != nil {
		pt.idVars = fpeIDVars(req.Type, pt.data, req.Metadata)
	}

	if pt.fpExpr == "" {
		pt.fpExpr = tokens.DefaultFingerprint[req.Type]
	}
	if v, ok := tokens.EvalExpression(pt.fpExpr, vars, join(path, "fingerprint_expression"), fe); ok {
		pt.fpValue = tokens.Stringify(v)
	}

	pt.maskExpr = req.Mask
	if pt.maskExpr == nil {
		pt.maskExpr = tokens.DefaultMask[req.Type]
	}
	if pt.maskExpr != nil {
		maskExpr, err := jsontext.AsPlain(pt.maskExpr)
		if err != nil {
			fe.Add(join(path, "mask"), "is not JSON")
		} else {
			pt.maskExpr = maskExpr
			pt.mask = tokens.EvalMask(maskExpr, vars, join(path, "mask"), fe)
		}
	}

	if idTmpl != nil && !fpeID {
		pt.id = ""
		pt.alias = prepareAlias(idTmpl, vars, join(path, "id"), fe)
	}
	if len(fe) == 0 && checkShown && (req.Mask != nil || idTmpl != nil) {
		// What the mask and the id show, by the flow analysis of their
		// expressions (tokens_alias_display.go). A type's default mask
		// with a generated or literal id needs no analysis per call: the
		// defaults are the vault's own, held to the rule by
		// TestDefaultMasksKeepTheDisplayRule, and the analysis is most of
		// a card tokenize's allocations.
		checkDisplay(req.Type, pt.data, req.Metadata, pt.maskExpr, idTmpl, join(path, "mask"), join(path, "id"), fe)
	}

	if len(req.SearchIndexes) > tokens.MaxSearchIndexes {
		fe.Add(join(path, "search_indexes"), "must hold at most %d expressions", tokens.MaxSearchIndexes)
	}
	for i, src := range req.SearchIndexes {
		p := fmt.Sprintf("%s[%d]", join(path, "search_indexes"), i)
		v, ok := tokens.EvalExpression(src, vars, p, fe)
		if !ok {
			continue
		}
		switch v.(type) {
		case string, json.Number, bool:
			s := tokens.Stringify(v)
			if s == "" {
				fe.Add(p, "gives an empty value")
				continue
			}
			pt.search = append(pt.search, s)
		default:
			fe.Add(p, "must give one value, not an object, array or nothing")
		}
	}
	return pt
}
