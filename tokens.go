package tokenvault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/aliases"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TokenRequest asks for one token. In a Tokenize body, an object is a token
// request when it has a "type" naming a token type and a "data" property;
// any other object is walked as plain structure.
type TokenRequest struct {
	// ID is an optional custom id: 3 to 400 characters, none of them
	// one of # / \ + ? [ ] | & = % < > { } ^ or whitespace other than
	// spaces inside it (not at its start or end). Empty means a generated
	// UUID.
	//
	// An ID holding "{{" is an expression over the token's own data: an
	// alias expression
	// (see internal/aliases): "{{ data.number | alias_card: true, true }}",
	// "{{ data.code | alias_preserve_format }}". It must use an alias
	// filter, may compose it with the other filters, and its result obeys
	// the rules above and is unique in the tenant: a taken alias is drawn
	// again, and when every draw is taken the request fails with Conflict.
	//
	// The display rule, decided by the flow analysis of the whole
	// expression (expr.Template.Flow: how each filter passes characters of
	// the data to its result), not by patterns: a mask of a card number (a
	// card token's number, or a plain token whose data is 12 to 19 digits
	// with spaces or dashes between them) shows at most the BIN (6 digits,
	// 8 for numbers of 16 digits or more, as alias_card counts it) and the
	// last four, whatever its expression (PCI DSS 3.4.1), else Invalid at
	// "mask", when the token is created and on every UpdateToken setting
	// the mask or the data. An id
	// expression (alias or fpe) shows in clear only characters the mask
	// shows exactly, and for a card number its BIN and last four; for a
	// token with no mask, nothing (random and FPE-enciphered characters
	// show nothing; a format's shape, its length and which characters are
	// digits, letters, spaces and dashes, is public). Else Invalid at
	// "id". So "{{ data.number | alias_card: true, true }}" with the
	// default card mask is allowed, "{{ data | alias_preserve_format: 0,
	// 4 }}" needs a mask showing the last four ("{{ data | reveal_last:
	// 4 }}"), and "{{ data.number | replace: '5', '-' | fpe: 'digits' }}"
	// (which keeps where the fives are) is refused.
	//
	// An ID whose every {{ }} ends in the fpe or fpe_tweaked filter
	// ("{{ data.number | fpe: \"card_bin_last4\" }}") is derived with FF1
	// under the tenant's token-id key: the same value gets the same id in
	// the tenant (internal/aliases; it needs token:read where the token is
	// created, PermissionDenied otherwise).
	ID string `json:"id,omitempty"`
	// Type is token, card or bank (empty with TokenIntentID).
	Type string `json:"type,omitempty"`
	// Data is the sensitive value (nil with TokenIntentID): any JSON value for token; for card an
	// object {number, expiration_month, expiration_year, cvc}; for bank
	// {routing_number, account_number}.
	Data any `json:"data"`
	// Mask is an expression (or a JSON structure of expressions) giving
	// the value shown instead of data under the mask transform. Cards and
	// banks have a default; plain tokens have none unless given.
	Mask any `json:"mask,omitempty"`
	// Containers place the token; the default depends on the type.
	Containers []string `json:"containers,omitempty"`
	// Metadata is non-sensitive data, searchable.
	Metadata map[string]string `json:"metadata,omitempty"`
	// SearchIndexes are expressions whose values the token can be found by
	// with SearchTokens; each must give one non-empty value.
	SearchIndexes []string `json:"search_indexes,omitempty"`
	// FingerprintExpression gives the value the fingerprint is computed
	// over; the default depends on the type.
	FingerprintExpression string `json:"fingerprint_expression,omitempty"`
	// DeduplicateToken returns the existing token of the same type,
	// fingerprint, fingerprint expression and containers instead of
	// creating a new one, if the caller may read it (token:read); a caller
	// that may not read gets a new token.
	DeduplicateToken bool `json:"deduplicate_token,omitempty"`
	// ExpiresAt deletes the token at that time; it must be in the future
	// and before the year 10000 in UTC.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// TokenIntentID converts a token intent into this token, instead of
	// Type and Data (which must then be absent): the intent's type and
	// data are used, a card's cvc left out, and the intent is deleted in
	// the transaction that creates the token (see intents_convert.go).
	TokenIntentID string `json:"token_intent_id,omitempty"`
}

// Token is a token as returned to a caller. Data is shaped by the caller's
// access: present (reveal), the mask (mask), or absent (redact). Only a
// caller that reads the token in clear (token:read on its containers with
// the reveal transform) gets its Fingerprint: equality with the data is
// told only to who sees it. A caller that may not read the token at all
// gets, for a token it updated, none of Data, Mask, Fingerprint,
// FingerprintExpression, Metadata and SearchIndexes (see docs/security.md,
// "What a key learns").
type Token struct {
	ID                    string            `json:"id"`
	TenantID              string            `json:"tenant_id"`
	Type                  string            `json:"type"`
	Data                  any               `json:"data,omitempty"`
	Mask                  any               `json:"mask,omitempty"`
	Fingerprint           string            `json:"fingerprint,omitempty"`
	FingerprintExpression string            `json:"fingerprint_expression,omitempty"`
	Containers            []string          `json:"containers"`
	Metadata              map[string]string `json:"metadata,omitempty"`
	SearchIndexes         []string          `json:"search_indexes,omitempty"`
	DeduplicateToken      bool              `json:"deduplicate_token,omitempty"`
	ExpiresAt             *time.Time        `json:"expires_at,omitempty"`
	CreatedBy             string            `json:"created_by,omitempty"`
	CreatedAt             time.Time         `json:"created_at"`
	ModifiedBy            string            `json:"modified_by,omitempty"`
	ModifiedAt            *time.Time        `json:"modified_at,omitempty"`
}

func scopeOf(r *tokens.Record) tokenScope {
	return tokenScope{ID: r.ID, Containers: r.Containers}
}

// Limits on token requests.
const (
	maxCustomIDLength  = 400
	minCustomIDLength  = 3
	maxContainers      = 10
	maxMetadataEntries = 50
	maxMetadataKey     = 100
	maxMetadataValue   = 500
	maxSearchIndexes   = 20
	maxExpressionBytes = 4096
	// maxTokensPerRequest bounds one Tokenize call (the HTTP body limit
	// bounds it further).
	maxTokensPerRequest = 10000
)

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

// join builds a field path: "" + "data" is "data", "cards[2]" + "data" is
// "cards[2].data".
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// normalizeJSON turns any Go value into plain JSON values (maps, slices,
// strings, json.Number, bools, nil) by a round trip through encoding/json.
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// asPlainJSON is normalizeJSON for a value the caller will not change
// afterwards: one that is plain JSON already (a decoded body's, most often)
// is returned as it is, without the round trip, which would give the same
// value back. Token requests use it; each token of a Tokenize body of a
// thousand values used to pay a round trip.
func asPlainJSON(v any) (any, error) {
	if isPlainJSON(v, MaxJSONDepth) {
		return v, nil
	}
	return normalizeJSON(v)
}

// isPlainJSON reports whether v is made of plain JSON values only (as
// decodeJSON returns them, numbers as json.Number) and nested at most depth
// levels. Strings are not checked here: every way in checks them (see
// checkGoText and decodeJSON).
func isPlainJSON(v any, depth int) bool {
	switch x := v.(type) {
	case nil, string, json.Number, bool:
		return true
	case map[string]any:
		if depth <= 0 {
			return false
		}
		for _, e := range x {
			if !isPlainJSON(e, depth-1) {
				return false
			}
		}
		return true
	case []any:
		if depth <= 0 {
			return false
		}
		for _, e := range x {
			if !isPlainJSON(e, depth-1) {
				return false
			}
		}
		return true
	}
	return false
}

// MaxJSONDepth bounds the nesting of every JSON document the Vault reads
// (bodies, token data, arguments, patches): deeper documents are refused
// before any work is done on them.
const MaxJSONDepth = 64

// errTooDeep is decodeJSON's answer to a document nested deeper than
// MaxJSONDepth.
var errTooDeep = unit.InvalidField("", "the JSON is nested deeper than %d levels", MaxJSONDepth)

// decodeJSON decodes one JSON value keeping numbers exact, refusing
// documents nested deeper than MaxJSONDepth, strings encoding/json would
// decode with a loss and keys given twice in an object (see
// jsonCheckError). The text is scanned once (jsoncheck.Scan: strings, keys
// and depth together), then decoded once.
func decodeJSON(b []byte) (any, error) {
	return decodeCheckedJSON(b, jsoncheck.Scan[[]byte])
}

// decodeJSONLastWins is decodeJSON for a text whose duplicate keys
// are not the caller's: a record's own JSON (written by encoding/json, so
// it has none, and must never read as nothing if it had), or a
// destination's answer, whose duplicates are the destination's affair.
// The last of a key is kept, as a browser's JSON.parse keeps it.
func decodeJSONLastWins(b []byte) (any, error) {
	return decodeCheckedJSON(b, jsoncheck.ScanStrings[[]byte])
}

func decodeCheckedJSON(b []byte, scan func([]byte) (int, *jsoncheck.Error)) (any, error) {
	depth, e := scan(b)
	if depth > MaxJSONDepth {
		return nil, errTooDeep
	}
	if err := jsonCheckError(e, ""); err != nil {
		return nil, err
	}
	return decodeScanned(b)
}

// decodeScanned decodes one JSON value that has been scanned already,
// keeping numbers exact.
func decodeScanned(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
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
		validateCustomID(req.ID, join(path, "id"), fe)
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
	if !slices.Contains(tokenTypes, req.Type) {
		fe.Add(join(path, "type"), "must be one of %s", strings.Join(tokenTypes, ", "))
		return pt
	}
	data, err := asPlainJSON(req.Data)
	if err != nil {
		fe.Add(join(path, "data"), "is not JSON")
		return pt
	}
	pt.data = validateData(req.Type, data, cardsValidOn, join(path, "data"), fe)
	pt.dataJSON, _ = json.Marshal(pt.data)

	pt.containers = validateContainers(req.Containers, req.Type, join(path, "containers"), fe)
	validateMetadata(req.Metadata, join(path, "metadata"), fe)
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, now, join(path, "expires_at"), fe)
	}
	if len(fe) > 0 {
		// Expressions are evaluated over valid data only.
		return pt
	}
	// A card's cvc is kept only for Options.Retention.CVC: nothing derived
	// from it (mask, fingerprint, search index) may outlive it.
	vars := expr.Vars(map[string]any{"data": exprData(req.Type, pt.data)})
	if pt.idTmpl != nil {
		pt.idVars = aliasRules.FPEIDVars(req.Type, pt.data, req.Metadata)
	}

	if pt.fpExpr == "" {
		pt.fpExpr = defaultFingerprint[req.Type]
	}
	if v, ok := evalExpression(pt.fpExpr, vars, join(path, "fingerprint_expression"), fe); ok {
		pt.fpValue = stringify(v)
	}

	pt.maskExpr = req.Mask
	if pt.maskExpr == nil {
		pt.maskExpr = defaultMask[req.Type]
	}
	if pt.maskExpr != nil {
		maskExpr, err := asPlainJSON(pt.maskExpr)
		if err != nil {
			fe.Add(join(path, "mask"), "is not JSON")
		} else {
			pt.maskExpr = maskExpr
			pt.mask = evalMask(maskExpr, vars, join(path, "mask"), fe)
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

	if len(req.SearchIndexes) > maxSearchIndexes {
		fe.Add(join(path, "search_indexes"), "must hold at most %d expressions", maxSearchIndexes)
	}
	for i, src := range req.SearchIndexes {
		p := fmt.Sprintf("%s[%d]", join(path, "search_indexes"), i)
		v, ok := evalExpression(src, vars, p, fe)
		if !ok {
			continue
		}
		switch v.(type) {
		case string, json.Number, bool:
			s := stringify(v)
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

// evalExpression parses and evaluates one expression template.
func evalExpression(src string, vars expr.Resolver, path string, fe unit.FieldErrors) (any, bool) {
	if len(src) > maxExpressionBytes {
		fe.Add(path, "must be at most %d bytes", maxExpressionBytes)
		return nil, false
	}
	tmpl, ok := defaultTemplates[src]
	if !ok {
		var err error
		if tmpl, err = expr.Parse(src); err != nil {
			fe.Add(path, "%s", err.Error())
			return nil, false
		}
	}
	v, err := tmpl.Eval(vars)
	if err != nil {
		fe.Add(path, "%s", err.Error())
		return nil, false
	}
	return v, true
}

// evalMask evaluates every string in a mask structure as an expression.
func evalMask(m any, vars expr.Resolver, path string, fe unit.FieldErrors) any {
	switch m := m.(type) {
	case string:
		v, _ := evalExpression(m, vars, path, fe)
		return v
	case map[string]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = evalMask(v, vars, join(path, k), fe)
		}
		return out
	case []any:
		out := make([]any, len(m))
		for i, v := range m {
			out[i] = evalMask(v, vars, fmt.Sprintf("%s[%d]", path, i), fe)
		}
		return out
	default:
		return m
	}
}

// stringify renders an expression value as the text that is hashed: strings
// as they are, anything else as JSON, nothing as "".
func stringify(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// customIDForbidden are the characters a custom token id may not hold:
// they have meanings in URLs, expressions and store keys.
const customIDForbidden = `#/\+?[]|&=%<>{}^`

func validateCustomID(id, path string, fe unit.FieldErrors) {
	if problem := customIDProblem(id); problem != "" {
		fe.Add(path, "%s", problem)
	}
}

// customIDProblem says what is wrong with a token id, or "" if nothing is.
// Generated UUIDs pass too, so it also guards lookups.
func customIDProblem(id string) string {
	n := utf8.RuneCountInString(id)
	if n < minCustomIDLength || n > maxCustomIDLength {
		return fmt.Sprintf("must be %d to %d characters", minCustomIDLength, maxCustomIDLength)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return unit.NoControl
		}
		if strings.ContainsRune(customIDForbidden, r) || r < ' ' || r == utf8.RuneError {
			return "must not contain whitespace but spaces inside it, or any of " + customIDForbidden
		}
	}
	// Spaces inside an id are allowed (an alias keeps a card number's
	// "4242 4242 ..."), not around it: {{ id }} in a detokenize body, a
	// form field and a person reading a log all trim them.
	if id[0] == ' ' || id[len(id)-1] == ' ' {
		return "must not start or end with a space"
	}
	return ""
}

func validateContainers(cs []string, typ, path string, fe unit.FieldErrors) []string {
	if len(cs) == 0 {
		return []string{defaultContainer[typ]}
	}
	if len(cs) > maxContainers {
		fe.Add(path, "must hold at most %d containers", maxContainers)
	}
	out := []string{}
	for i, c := range cs {
		if !validContainer(c) {
			fe.Add(fmt.Sprintf("%s[%d]", path, i), "must start and end with / and hold letters, digits, - and _ segments")
		} else if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func validateMetadata(md map[string]string, path string, fe unit.FieldErrors) {
	if len(md) > maxMetadataEntries {
		fe.Add(path, "must hold at most %d entries", maxMetadataEntries)
	}
	for k, v := range md {
		if unit.HasControl(k) {
			// Not in the path: the error would carry the character.
			fe.Add(path, "key %q %s", k, unit.NoControl)
			continue
		}
		if k == "" || len(k) > maxMetadataKey {
			fe.Add(join(path, k), "keys must be 1 to %d bytes", maxMetadataKey)
		}
		if len(v) > maxMetadataValue {
			fe.Add(join(path, k), "must be at most %d bytes", maxMetadataValue)
		}
	}
}
