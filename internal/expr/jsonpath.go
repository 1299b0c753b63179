package expr

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
)

// pathStep is one step of a JSON path: an object key or an array index.
type pathStep struct {
	key   string
	index int
	isIdx bool
}

// compilePath checks the json filter's path at parse time and keeps it
// compiled in the argument.
func compilePath(a []arg) error {
	steps, err := parsePath(a[0].s)
	a[0].path = steps
	return err
}

// parsePath parses the JSONPath subset this package supports: "$" then any
// of .key, ['key'], ["key"] and [n]. A .key is letters, digits, "_" and
// "-"; other keys need brackets. Wildcards, filters and negative indexes
// are left out because json must select exactly one value.
func parsePath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("a JSON path starts with $")
	}
	var steps []pathStep
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			n := strings.IndexFunc(rest[1:], func(r rune) bool { return !isNameRune(r) })
			if n < 0 {
				n = len(rest) - 1
			}
			if n == 0 {
				return nil, errors.New("JSON path has an empty or malformed .key")
			}
			steps = append(steps, pathStep{key: rest[1 : 1+n]})
			rest = rest[1+n:]
		case '[':
			step, n, err := bracket(rest)
			if err != nil {
				return nil, err
			}
			steps = append(steps, step)
			rest = rest[n:]
		default:
			return nil, errors.New("JSON path steps are .key, ['key'] or [n]")
		}
	}
	return steps, nil
}

// bracket parses ['key'], ["key"] or [n] at the start of s and returns
// its length.
func bracket(s string) (pathStep, int, error) {
	if len(s) > 1 && (s[1] == '\'' || s[1] == '"') {
		end := strings.IndexByte(s[2:], s[1])
		if end < 0 || 2+end+1 >= len(s) || s[2+end+1] != ']' {
			return pathStep{}, 0, errors.New("JSON path has a malformed ['key']")
		}
		return pathStep{key: s[2 : 2+end]}, 2 + end + 2, nil
	}
	n := 0
	i := 1
	for ; i < len(s) && isDigit(s[i]); i++ {
		if n = n*10 + int(s[i]-'0'); n > maxInt {
			return pathStep{}, 0, errors.New("JSON path index is out of range")
		}
	}
	if i == 1 || i == len(s) || s[i] != ']' {
		return pathStep{}, 0, errors.New("JSON path has a malformed [n]")
	}
	return pathStep{index: n, isIdx: true}, i + 1, nil
}

func isNameRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// selectPath is the json filter. Its input is an object or array, or a
// string holding JSON, which is decoded with numbers kept as json.Number.
// It must select a value that is present (a present null counts): a
// missing key or index is an error, unlike a missing variable, because a
// detokenization that silently inserts nothing hides a wrong path.
func selectPath(v any, a []arg) (any, error) {
	nothing := errors.New("json path " + a[0].s + " selects nothing")
	if v == nil {
		return nil, nothing
	}
	if s, ok := v.(string); ok {
		var err error
		if v, err = decodeJSON(s); err != nil {
			return nil, errors.New("json input is a string that does not hold JSON")
		}
	}
	for _, st := range a[0].path {
		switch x := v.(type) {
		case map[string]any:
			val, ok := x[st.key]
			if st.isIdx || !ok {
				return nil, nothing
			}
			v = val
		case []any:
			if !st.isIdx || st.index >= len(x) {
				return nil, nothing
			}
			v = x[st.index]
		default:
			return nil, nothing
		}
	}
	return v, nil
}

// decodeJSON decodes exactly one JSON value.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}
