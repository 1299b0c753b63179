package jsontext

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/jsoncheck"
)

// A caller's JSON reaches the Vault in one of three forms, each checked
// and decoded once:
//
//   - a jsoncheck.Doc, from httpapi, which scanned and decoded the body:
//     only its depth is held to MaxDepth (DocValue);
//   - raw JSON ([]byte, json.RawMessage): scanned once (jsoncheck.Scan)
//     and decoded once (Decode);
//   - Go values: plain ones (maps of any, slices of any, strings, numbers,
//     bools, nil: what a program builds, and what tenant code's values
//     are once exported) are checked and copied in one walk (PlainCopy);
//     any other (structs, typed maps, json.RawMessage inside) goes through
//     encoding/json as before, which PlainCopy's result equals.

// DocValue is the value of a Doc, or ErrTooDeep.
func DocValue(d jsoncheck.Doc) (any, error) {
	if d.Depth() > MaxDepth {
		return nil, ErrTooDeep
	}
	return d.Value(), nil
}

// PlainCopy is what CheckGoText, json.Marshal and Decode make of v in
// turn (a copy, numbers as json.Number), made in one walk, when v is made
// of plain values only, nested at most MaxDepth levels, its strings
// valid UTF-8 and its numbers finite. ok is false otherwise, and nothing
// is judged: the caller takes the long way, which names what is wrong.
func PlainCopy(v any) (out any, ok bool) {
	return plainCopyDepth(v, MaxDepth)
}

func plainCopyDepth(v any, depth int) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case json.Number:
		return x, validNumber(string(x))
	case float64:
		return floatNumber(x)
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10)), true
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), true
	case map[string]any:
		if x == nil {
			return nil, true // encoded as null
		}
		if depth <= 0 {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := plainCopyDepth(e, depth-1)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true
		}
		if depth <= 0 {
			return nil, false
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := plainCopyDepth(e, depth-1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// floatNumber is f as encoding/json writes a float64 (then decoded as a
// json.Number); false for NaN and the infinities, which it refuses.
func floatNumber(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return json.Number(b), true
}

// validNumber reports whether s is a number in JSON's grammar, as
// encoding/json requires of a json.Number it encodes ("" it would encode
// as 0: not plain).
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
