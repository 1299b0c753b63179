package tokens

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ValidID reports whether id can name a token: a UUID or a custom id.
func ValidID(id string) bool { return CustomIDProblem(id) == "" }

// Presentation says what a token response is about, which decides what a
// caller that may not read the token (access.Principal.MayRead) is shown.
type Presentation int

const (
	// PresentCreated: a token just built from the caller's own request,
	// or the one a deduplicating create found instead (only ever a token
	// the caller reads in clear; the root's createAnswer). A caller that may not read it
	// gets everything of its own request back (the mask of its own value
	// included) but the fingerprint, which could be matched against other
	// tokens' fingerprints; so does one that reads it only masked or
	// redacted (access.Principal.MayReadClear).
	PresentCreated Presentation = iota
	// PresentUpdated: a stored token the caller changed. A caller that may
	// not read it learns nothing of its stored content: no data, mask,
	// fingerprint, fingerprint expression, metadata or search indexes.
	PresentUpdated
)

// PresentTransform is the transform present shapes rec's data with for
// p under perm: p's rule there (redact without one), and a mask instead
// of reveal for any type but a plain token, since an answer to a write
// never shows a card or bank account whole.
func PresentTransform(p *access.Principal, rec *Record, perm string) string {
	transform, ok := p.Decide(perm, ScopeOf(rec))
	if !ok {
		return access.TransformRedact
	}
	if transform == access.TransformReveal && rec.Type != unit.TypeToken {
		return access.TransformMask
	}
	return transform
}

// WithholdContent removes everything of a token that depends on its data
// or was chosen by whoever wrote it, keeping its identity and placement:
// id, tenant, type, containers, expiry, timestamps and actors.
func (tok *Token) WithholdContent() {
	tok.Data, tok.Mask, tok.Fingerprint, tok.FingerprintExpression = nil, nil, "", ""
	tok.Metadata, tok.SearchIndexes, tok.Subject = nil, nil, ""
}

// TokenOf builds the API's Token from the record, its data shaped by
// transform: revealed, masked (the evaluated mask) or left out. It is the
// one place the record's shape meets Token's (TestTokenRecordFields holds
// both to it), called once per token of an answer, which is when Data and
// Mask are decoded from their JSON text. The token has containers of its
// own; its metadata, search indexes and times are the record's, not copies.
func TokenOf(r *Record, transform string) *Token {
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
		Subject:               r.Subject,
	}
	if len(r.Mask) > 0 {
		tok.Mask = DecodeStoredJSON(r.Mask)
	}
	switch transform {
	case access.TransformReveal:
		tok.Data = DecodeStoredJSON(r.Data)
	case access.TransformMask:
		tok.Data = tok.Mask
	}
	return tok
}

// Value is the value a detokenization expression inserts: api's Data,
// without building the rest of the token.
func Value(r *Record, transform string) any {
	var raw json.RawMessage
	switch transform {
	case access.TransformReveal:
		raw = r.Data
	case access.TransformMask:
		raw = r.Mask
	}
	if len(raw) == 0 {
		return nil
	}
	return DecodeStoredJSON(raw)
}

// DecodeStoredJSON decodes a record's data or mask, nil if it cannot. Most
// data is one string: a string with nothing to unescape is taken as it
// is, which is what decoding it would give, without a decoder.
func DecodeStoredJSON(b []byte) any {
	if s, ok := PlainJSONString(b); ok {
		return s
	}
	v, _ := jsontext.DecodeLastWins(b)
	return v
}

// PlainJSONString returns the string JSON text b encodes, if b is a string
// with no escape, no control character and valid UTF-8.
func PlainJSONString(b []byte) (string, bool) {
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
