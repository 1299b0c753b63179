package tokenvault

import (
	"fmt"
	"maps"
	"slices"
)

// rewriteJSON rebuilds a tree of JSON values (objects, arrays and leaves),
// the one walk behind tokenize and detokenize. visit is called on every node
// with its path ("cards[2].data"), object keys in sorted order so that ids,
// errors and log lines come in a stable order. It returns the node's
// replacement and true, or false to descend into an object or array (an
// unhandled leaf is kept as it is).
func rewriteJSON(v any, path string, visit func(v any, path string) (any, bool, error)) (any, error) {
	r, handled, err := visit(v, path)
	if err != nil || handled {
		return r, err
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if out[k], err = rewriteJSON(x[k], join(path, k), visit); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			if out[i], err = rewriteJSON(val, fmt.Sprintf("%s[%d]", path, i), visit); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}
