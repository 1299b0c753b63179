package expr

import (
	"errors"
	"strconv"
	"strings"
)

// Vars returns a Resolver of dotted paths over named variables: "data" is
// vars["data"], "data.number" its "number" key, and a numeric segment
// indexes an array ("data.items.0"). A missing variable, key or index is
// nil, as in Liquid, so an optional field in a mask prints nothing. A root
// that is not a path (an empty segment, or a character other than letters,
// digits, "_" and "-") is an error, so a typo is not mistaken for a missing
// value.
func Vars(vars map[string]any) Resolver {
	return func(root string) (any, error) {
		segs := strings.Split(root, ".")
		for _, s := range segs {
			if s == "" || strings.IndexFunc(s, func(r rune) bool { return !isNameRune(r) }) >= 0 {
				return nil, errors.New(strconv.Quote(root) + " is not a variable path")
			}
		}
		var v any = vars
		for _, s := range segs {
			v = step(v, s)
		}
		return v, nil
	}
}

// step reads one path segment of v.
func step(v any, seg string) any {
	switch x := v.(type) {
	case map[string]any:
		return x[seg]
	case []any:
		// Only a plain decimal index, so "01" or "-0" is no index.
		if seg != "0" && (seg[0] == '0' || strings.Trim(seg, "0123456789") != "") {
			return nil
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i >= len(x) {
			return nil
		}
		return x[i]
	}
	return nil
}
