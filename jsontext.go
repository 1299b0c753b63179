package tokenvault

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// jsonCheckError is the Invalid error for what jsoncheck found in a JSON
// text from a caller that encoding/json would decode with a loss: a
// string with invalid UTF-8 or a lone surrogate escape such as "\ud800"
// (decoded, it would become U+FFFD), or a key given twice in an object
// (all but its last value would be dropped), so that what is stored or
// forwarded is what was sent. It names the string's path under prefix
// ("data.name", "args.card[0]"); nil for nil.
func jsonCheckError(e *jsoncheck.Error, prefix string) error {
	if e == nil {
		return nil
	}
	return unit.InvalidField(jsoncheck.Join(prefix, e.Path), "%s", e.Message())
}

// checkGoText is jsonCheckError for a Go value a caller passes in process
// (a map, a struct, json.RawMessage): a string that is not valid UTF-8
// would be encoded as U+FFFD, so it is refused, naming its path under
// prefix.
func checkGoText(v any, prefix string) error {
	e := jsoncheck.Value(v)
	if e == nil {
		return nil
	}
	return unit.InvalidField(jsoncheck.Join(prefix, e.Path), "%s", e.Message())
}

// refused reports whether err is decodeJSON's own refusal of a text (too
// deep, or a string it would decode with a loss), which names what is
// wrong, rather than a syntax error of the decoder.
func refused(err error) bool {
	_, ok := err.(*Error)
	return ok
}

// badDateTime is a field error naming m[name] under path when it is set
// but is not an RFC 3339 date-time string (encoding/json's error does not
// say which field it could not read), or nil.
func badDateTime(m map[string]any, name, path string) *Error {
	v, ok := m[name]
	if !ok || v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return nil
		}
	}
	return unit.InvalidField(join(path, name), "must be an ISO 8601 (RFC 3339) date-time string such as 2030-01-02T15:04:05Z")
}
