package tokenvault

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/aliases"
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
	alias       *aliases.ID
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
	// idTmpl is an id derived with the fpe filter (aliases.Rules.DeriveFPEID),
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
// display rule (aliases.Rules.CheckDisplay) only with checkShown: a patch
// that changes neither the mask nor the data leaves a token as it was
// judged.
func prepareTokenShown(req TokenRequest, now, cardsValidOn time.Time, path string, checkShown bool, fe unit.FieldErrors) *preparedToken {
	pt := &preparedToken{
		id: req.ID, typ: req.Type, metadata: req.Metadata, searchExprs: req.SearchIndexes,
		fpExpr: req.FingerprintExpression, dedupe: req.DeduplicateToken, expiresAt: req.ExpiresAt,
		newCVC: true,
	}
	if req.ID != "" && !aliases.IsExpression(req.ID) {
		tokens.ValidateCustomID(req.ID, join(path, "id"), fe)
	}
	if req.TokenIntentID != "" {
		pt.intent = prepareConversion(req, now, path, fe)
		return pt
	}
	idTmpl := aliasRules.ParseIDExpression(req.ID, join(path, "id"), fe)
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
		pt.idVars = aliasRules.FPEIDVars(req.Type, pt.data, req.Metadata)
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
		pt.alias = aliasRules.Prepare(idTmpl, vars, join(path, "id"), fe)
	}
	if len(fe) == 0 && checkShown && (req.Mask != nil || idTmpl != nil) {
		// What the mask and the id show, by the flow analysis of their
		// expressions (internal/aliases, display.go). A type's default mask
		// with a generated or literal id needs no analysis per call: the
		// defaults are the vault's own, held to the rule by
		// TestDefaultMasksKeepTheDisplayRule, and the analysis is most of
		// a card tokenize's allocations.
		aliasRules.CheckDisplay(req.Type, pt.data, req.Metadata, pt.maskExpr, idTmpl, join(path, "mask"), join(path, "id"), fe)
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

// Card is the data of a card token (type card), as Go fields: what a
// TokenRequest of type card holds in Data, which a Card may also be
// given as. The card's number is 13 to 19 plain digits passing the Luhn
// check, ExpirationMonth 1 to 12, ExpirationYear four digits, and the card
// not expired; CVC, when set, is 3 or 4 digits and is kept only for
// Options.Retention.CVC.
type Card struct {
	Number          string `json:"number"`
	ExpirationMonth int    `json:"expiration_month"`
	ExpirationYear  int    `json:"expiration_year"`
	CVC             string `json:"cvc,omitempty"`
}

// TokenCreator creates tokens: a *Vault in process, or a *client.Client
// over HTTP. TokenizeAs takes either.
type TokenCreator interface {
	CreateToken(ctx context.Context, key Credential, req TokenRequest) (*Token, error)
}

// TokenReader reads tokens: a *Vault in process, or a *client.Client over
// HTTP. DetokenizeAs takes either.
type TokenReader interface {
	GetToken(ctx context.Context, key Credential, id string) (*Token, error)
}

// DefaultCVCRetention is how long a card's cvc is kept when
// Options.Retention.CVC is zero.
const DefaultCVCRetention = time.Hour

// sweepCVCs removes from the stored records every cvc past its retention,
// in transactions of at most sweepBatch cards, and returns how many it
// removed. Sweep calls it.
func (v *Vault) sweepCVCs(ctx context.Context) (int, error) {
	total, err := v.scheduleLegacyCVCs(ctx)
	if err != nil {
		return total, err
	}
	for {
		n, more, err := v.sweepCVCsOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// sweepCVCsOnce removes up to sweepBatch due cvcs in one transaction: each
// card record is written again without its cvc, its schedule entry
// deleted, and the removal logged, together or not at all.
func (v *Vault) sweepCVCsOnce(ctx context.Context) (removed int, more bool, err error) {
	through := func(now time.Time) string { return barrier.TimeKey(now.Add(-v.cvcRetention)) }
	return v.work.SweepDue(ctx, barrier.CVCSchedule, through, sweepBatch, func(t *unit.Tx, rest string) (bool, error) {
		// rest is <nanos>/<tenant>/<id>.
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) != 3 {
			return false, nil
		}
		done, err := v.tokens.RemoveCVC(t, parts[1], parts[2], parts[0])
		if done {
			(&txn{Tx: t, v: v}).sweptOne(SweptCVCs)
		}
		return done, err
	})
}

// scheduleLegacyCVCs gives every card stored before cvc retention existed
// (a cvc without CVCAt) its schedule: it visits every tenant's token
// records once, sweepBatch a transaction, removing the cvcs already due and
// recording when the others were written (tokens.CVCWrittenAt). Cards written
// since carry their schedule, so once the scan is done it is one read per
// sweep. It returns how many cvcs it removed.
func (v *Vault) scheduleLegacyCVCs(ctx context.Context) (int, error) {
	total := 0
	for {
		n, done, err := v.scheduleLegacyCVCsOnce(ctx)
		total += n
		if err != nil || done {
			return total, err
		}
	}
}

func (v *Vault) scheduleLegacyCVCsOnce(ctx context.Context) (removed int, done bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		var err error
		removed, done, err = v.tokens.ScheduleLegacyCVCs(t.Tx, sweepBatch)
		return err
	})
	return removed, done, err
}
