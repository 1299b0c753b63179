package tokens

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Request asks for one token. In a Tokenize body, an object is a token
// request when it has a "type" naming a token type and a "data" property;
// any other object is walked as plain structure.
type Request struct {
	// ID is an optional custom id: 3 to 400 characters, none of them
	// one of # / \ + ? [ ] | & = % < > { } ^ or whitespace other than
	// spaces inside it (not at its start or end). Empty means a generated
	// UUID.
	//
	// An ID holding "{{" is an expression over the token's own data: an
	// alias expression
	// (see the root's tokens_alias.go): "{{ data.number | alias_card: true, true }}",
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
	// the tenant (the root's tokens_fpe.go; it needs token:read where the token is
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
	// the transaction that creates the token (see convert.go).
	TokenIntentID string `json:"token_intent_id,omitempty"`
	// Subject names the data subject the token is about (an id of the
	// person in the caller's systems, 1 to MaxSubjectLength bytes, no
	// control characters, slashes or spaces at its ends): the token's
	// Data and Mask are then sealed under that subject's own key, which
	// EraseSubject destroys (docs/erasure.md). It is set when the token
	// is created and never changes. It needs a vault with a subject key
	// store (Options.SubjectKeys).
	Subject string `json:"subject,omitempty"`
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
	// Subject is the token's data subject (Request.Subject), shown as
	// its metadata is: to a caller that may read the token.
	Subject string `json:"subject,omitempty"`
}

func ScopeOf(r *Record) access.TokenScope {
	return access.TokenScope{ID: r.ID, Containers: r.Containers}
}

// Limits on token requests.
const (
	maxCustomIDLength  = 400
	minCustomIDLength  = 3
	maxContainers      = 10
	MaxMetadataEntries = 50
	MaxMetadataKey     = 100
	MaxMetadataValue   = 500
	MaxSearchIndexes   = 20
	MaxExpressionBytes = 4096
	// MaxTokensPerRequest bounds one Tokenize call (the HTTP body limit
	// bounds it further).
	MaxTokensPerRequest = 10000
)

// EvalExpression parses and evaluates one expression template.
func EvalExpression(src string, vars expr.Resolver, path string, fe unit.FieldErrors) (any, bool) {
	if len(src) > MaxExpressionBytes {
		fe.Add(path, "must be at most %d bytes", MaxExpressionBytes)
		return nil, false
	}
	tmpl, ok := DefaultTemplates[src]
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

// EvalMask evaluates every string in a mask structure as an expression.
func EvalMask(m any, vars expr.Resolver, path string, fe unit.FieldErrors) any {
	switch m := m.(type) {
	case string:
		v, _ := EvalExpression(m, vars, path, fe)
		return v
	case map[string]any:
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = EvalMask(v, vars, jsontext.Field(path, k), fe)
		}
		return out
	case []any:
		out := make([]any, len(m))
		for i, v := range m {
			out[i] = EvalMask(v, vars, fmt.Sprintf("%s[%d]", path, i), fe)
		}
		return out
	default:
		return m
	}
}

// Stringify renders an expression value as the text that is hashed: strings
// as they are, anything else as JSON, nothing as "".
func Stringify(v any) string {
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

func ValidateCustomID(id, path string, fe unit.FieldErrors) {
	if problem := CustomIDProblem(id); problem != "" {
		fe.Add(path, "%s", problem)
	}
}

// CustomIDProblem says what is wrong with a token id, or "" if nothing is.
// Generated UUIDs pass too, so it also guards lookups.
func CustomIDProblem(id string) string {
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

func ValidateContainers(cs []string, typ, path string, fe unit.FieldErrors) []string {
	if len(cs) == 0 {
		return []string{DefaultContainer[typ]}
	}
	if len(cs) > maxContainers {
		fe.Add(path, "must hold at most %d containers", maxContainers)
	}
	out := []string{}
	for i, c := range cs {
		if !access.ValidContainer(c) {
			fe.Add(fmt.Sprintf("%s[%d]", path, i), "must start and end with / and hold letters, digits, - and _ segments")
		} else if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func ValidateMetadata(md map[string]string, path string, fe unit.FieldErrors) {
	if len(md) > MaxMetadataEntries {
		fe.Add(path, "must hold at most %d entries", MaxMetadataEntries)
	}
	for k, v := range md {
		if unit.HasControl(k) {
			// Not in the path: the error would carry the character.
			fe.Add(path, "key %q %s", k, unit.NoControl)
			continue
		}
		if k == "" || len(k) > MaxMetadataKey {
			fe.Add(jsontext.Field(path, k), "keys must be 1 to %d bytes", MaxMetadataKey)
		}
		if len(v) > MaxMetadataValue {
			fe.Add(jsontext.Field(path, k), "must be at most %d bytes", MaxMetadataValue)
		}
	}
}
