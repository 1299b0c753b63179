package jsontext

import (
	"encoding/json"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Value turns a caller's JSON value (tenant code's arguments, sent in
// any of the three forms plain.go describes) into plain JSON values,
// checked and decoded once: a jsoncheck.Doc as it is (DocValue), raw JSON
// (json.RawMessage) scanned once then decoded, Go values copied in one
// walk when they are plain (PlainCopy) and through encoding/json
// otherwise. nil stays nil. Its problems are Invalid at field, or at the
// path inside it of the string at fault; a document too deep is
// ErrTooDeep.
func Value(v any, field string) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case jsoncheck.Doc:
		return DocValue(x)
	case json.RawMessage:
		depth, e := jsoncheck.Scan([]byte(x))
		if err := CheckError(e, field); err != nil {
			return nil, err
		}
		if depth > MaxDepth {
			return nil, ErrTooDeep
		}
		out, err := DecodeScanned(x)
		if err != nil {
			return nil, unit.InvalidField(field, "is not valid JSON")
		}
		return out, nil
	}
	if out, ok := PlainCopy(v); ok {
		return out, nil
	}
	if err := CheckGoText(v, field); err != nil {
		return nil, err
	}
	out, err := Normalize(v)
	if err != nil {
		return nil, unit.InvalidField(field, "must be JSON values")
	}
	return out, nil
}
