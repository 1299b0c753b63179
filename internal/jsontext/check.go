package jsontext

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// CheckError is the Invalid error for what jsoncheck found in a JSON
// text from a caller that encoding/json would decode with a loss: a
// string with invalid UTF-8 or a lone surrogate escape such as "\ud800"
// (decoded, it would become U+FFFD), or a key given twice in an object
// (all but its last value would be dropped), so that what is stored or
// forwarded is what was sent. It names the string's path under prefix
// ("data.name", "args.card[0]"); nil for nil.
func CheckError(e *jsoncheck.Error, prefix string) error {
	if e == nil {
		return nil
	}
	return unit.InvalidField(jsoncheck.Join(prefix, e.Path), "%s", e.Message())
}

// CheckGoText is CheckError for a Go value a caller passes in process
// (a map, a struct, json.RawMessage): a string that is not valid UTF-8
// would be encoded as U+FFFD, so it is refused, naming its path under
// prefix.
func CheckGoText(v any, prefix string) error {
	e := jsoncheck.Value(v)
	if e == nil {
		return nil
	}
	return unit.InvalidField(jsoncheck.Join(prefix, e.Path), "%s", e.Message())
}

// Refused reports whether err is Decode's own refusal of a text (too
// deep, or a string it would decode with a loss), which names what is
// wrong, rather than a syntax error of the decoder.
func Refused(err error) bool {
	_, ok := err.(*unit.Error)
	return ok
}

// BadDateTime is a field error naming m[name] under path when it is set
// but is not an RFC 3339 date-time string (encoding/json's error does not
// say which field it could not read), or nil.
func BadDateTime(m map[string]any, name, path string) *unit.Error {
	v, ok := m[name]
	if !ok || v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return nil
		}
	}
	return unit.InvalidField(Field(path, name), "must be an ISO 8601 (RFC 3339) date-time string such as 2030-01-02T15:04:05Z")
}

// Field builds a field path: "" + "data" is "data", "cards[2]" + "data" is
// "cards[2].data".
func Field(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}
