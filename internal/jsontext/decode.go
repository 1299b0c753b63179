package jsontext

import (
	"bytes"
	"encoding/json"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxDepth bounds the nesting of every JSON document the Vault reads
// (bodies, token data, arguments, patches): deeper documents are refused
// before any work is done on them. The root exports it as MaxJSONDepth.
const MaxDepth = 64

// ErrTooDeep is Decode's answer to a document nested deeper than
// MaxDepth.
var ErrTooDeep = unit.InvalidField("", "the JSON is nested deeper than %d levels", MaxDepth)

// Decode decodes one JSON value keeping numbers exact, refusing
// documents nested deeper than MaxDepth, strings encoding/json would
// decode with a loss and keys given twice in an object (see
// CheckError). The text is scanned once (jsoncheck.Scan: strings, keys
// and depth together), then decoded once.
func Decode(b []byte) (any, error) {
	return decodeChecked(b, jsoncheck.Scan[[]byte])
}

// DecodeLastWins is Decode for a text whose duplicate keys
// are not the caller's: a record's own JSON (written by encoding/json, so
// it has none, and must never read as nothing if it had), or a
// destination's answer, whose duplicates are the destination's affair.
// The last of a key is kept, as a browser's JSON.parse keeps it.
func DecodeLastWins(b []byte) (any, error) {
	return decodeChecked(b, jsoncheck.ScanStrings[[]byte])
}

func decodeChecked(b []byte, scan func([]byte) (int, *jsoncheck.Error)) (any, error) {
	depth, e := scan(b)
	if depth > MaxDepth {
		return nil, ErrTooDeep
	}
	if err := CheckError(e, ""); err != nil {
		return nil, err
	}
	return DecodeScanned(b)
}

// DecodeScanned decodes one JSON value that has been scanned already,
// keeping numbers exact.
func DecodeScanned(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Normalize turns any Go value into plain JSON values (maps, slices,
// strings, json.Number, bools, nil) by a round trip through encoding/json.
func Normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// AsPlain is Normalize for a value the caller will not change
// afterwards: one that is plain JSON already (a decoded body's, most often)
// is returned as it is, without the round trip, which would give the same
// value back. Token requests use it; each token of a Tokenize body of a
// thousand values used to pay a round trip.
func AsPlain(v any) (any, error) {
	if isPlain(v, MaxDepth) {
		return v, nil
	}
	return Normalize(v)
}

// isPlain reports whether v is made of plain JSON values only (as
// Decode returns them, numbers as json.Number) and nested at most depth
// levels. Strings are not checked here: every way in checks them (see
// CheckGoText and Decode).
func isPlain(v any, depth int) bool {
	switch x := v.(type) {
	case nil, string, json.Number, bool:
		return true
	case map[string]any:
		if depth <= 0 {
			return false
		}
		for _, e := range x {
			if !isPlain(e, depth-1) {
				return false
			}
		}
		return true
	case []any:
		if depth <= 0 {
			return false
		}
		for _, e := range x {
			if !isPlain(e, depth-1) {
				return false
			}
		}
		return true
	}
	return false
}
