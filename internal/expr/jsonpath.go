package expr

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// pathStep is one step of a JSON path: a property name or an array index.
type pathStep struct {
	key   string
	index int
	isIdx bool
}

// parsePath parses the JSONPath subset $, .key, ['key'], ["key"] and [n].
func parsePath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("a JSON path starts with $")
	}
	var steps []pathStep
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, errors.New("empty property name in JSON path")
			}
			steps = append(steps, pathStep{key: rest[:n]})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("unclosed [ in JSON path")
			}
			inner := rest[1:end]
			if s, ok := unquote(inner); ok {
				steps = append(steps, pathStep{key: s})
			} else if i, err := strconv.Atoi(inner); err == nil && i >= 0 {
				steps = append(steps, pathStep{index: i, isIdx: true})
			} else {
				return nil, errors.New("JSON path brackets hold a quoted name or an index")
			}
			rest = rest[end+1:]
		default:
			return nil, errors.New("malformed JSON path")
		}
	}
	return steps, nil
}

func checkPath(a []arg) error {
	_, err := parsePath(a[0].s)
	return err
}

// jsonPath selects one value. A string input holding JSON is parsed first.
func jsonPath(v any, a []arg) (any, error) {
	steps, err := parsePath(a[0].s)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("input is not JSON")
		}
	}
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			val, ok := x[st.key]
			if st.isIdx || !ok {
				return nil, errors.New("JSON path " + a[0].s + " selects nothing")
			}
			v = val
		case []any:
			if !st.isIdx || st.index >= len(x) {
				return nil, errors.New("JSON path " + a[0].s + " selects nothing")
			}
			v = x[st.index]
		default:
			return nil, errors.New("JSON path " + a[0].s + " selects nothing")
		}
	}
	return v, nil
}
