package reactors

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// PrepareArgs applies a formula's request_parameters to the (detokenized)
// arguments of an invocation, following the spec's seven rules:
//
//  1. no declared parameters: every argument passes as sent (but a number
//     beyond a float64's range, which the code cannot receive, is
//     Invalid, naming its path);
//  2. an argument is validated when its name equals a declared name
//     exactly (case-sensitive);
//  3. dotted names (a.b.c) address nested objects;
//  4. undeclared arguments are removed;
//  5. a missing non-optional parameter is Invalid, naming it;
//  6. a value of another type is cast where possible (a numeric string to
//     a number, "true"/"false" to a boolean, a number or boolean to a
//     string) and Invalid otherwise; a number (or numeric string) beyond
//     the range of a JavaScript number (a float64: 1e400, -1e400) cannot
//     be one, and is Invalid too, rather than reaching the code as
//     Infinity or as text;
//  7. it runs after detokenization, so one card or bank token whose data
//     object was injected whole can supply several dotted parameters.
//
// Missing arguments are an empty object. A null argument counts as
// missing.
func PrepareArgs(params []RequestParameter, args any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	if len(params) == 0 {
		// Passed as sent, but the code could not be given a number no
		// JavaScript number holds: a 400 here, not a failure of the code.
		if path, ok := outOfRange(args, "args"); ok {
			return nil, unit.InvalidField(path, "is out of range for a number (at most about ±1.8e308, a JavaScript number)")
		}
		return args, nil
	}
	obj, ok := args.(map[string]any)
	if !ok {
		return nil, unit.InvalidField("args", "must be an object")
	}
	params = slices.Clone(params)
	slices.SortFunc(params, func(a, b RequestParameter) int { return strings.Compare(a.Name, b.Name) })
	out := map[string]any{}
	fe := unit.FieldErrors{}
	for _, p := range params {
		path := strings.Split(p.Name, ".")
		v, found := lookupPath(obj, path)
		if !found || v == nil {
			if !p.Optional {
				fe.Add("args."+p.Name, "is required")
			}
			continue
		}
		cast, ok := castArg(v, p.Type)
		if !ok {
			fe.Add("args."+p.Name, "must be a %s", p.Type)
			continue
		}
		if n, isNumber := cast.(json.Number); isNumber && !finiteNumber(n) {
			fe.Add("args."+p.Name, "is out of range for a number (at most about ±1.8e308, a JavaScript number)")
			continue
		}
		if !setPath(out, path, cast) {
			fe.Add("args."+p.Name, "conflicts with another parameter")
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func lookupPath(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, name := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setPath sets obj[a][b][c] = v for path a.b.c, creating objects on the
// way; false when a value is in the way (parameters "a" and "a.b").
func setPath(obj map[string]any, path []string, v any) bool {
	for _, name := range path[:len(path)-1] {
		next, ok := obj[name]
		if !ok {
			m := map[string]any{}
			obj[name] = m
			obj = m
			continue
		}
		if obj, ok = next.(map[string]any); !ok {
			return false
		}
	}
	if _, taken := obj[path[len(path)-1]]; taken {
		return false
	}
	obj[path[len(path)-1]] = v
	return true
}

// castArg converts v to typ where the conversion loses nothing.
func castArg(v any, typ string) (any, bool) {
	switch typ {
	case TypeString:
		switch x := v.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		case bool:
			return strconv.FormatBool(x), true
		}
	case TypeNumber:
		switch x := v.(type) {
		case json.Number:
			return x, true
		case string:
			if n, ok := jsonNumber(strings.TrimSpace(x)); ok {
				return n, true
			}
		}
	case TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, true
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
	}
	return nil, false
}

// finiteNumber reports whether n is within the range of a float64, the
// number type of the code that receives it.
func finiteNumber(n json.Number) bool {
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && !math.IsInf(f, 0)
}

// outOfRange finds a number beyond a float64's range in v (decoded JSON),
// and returns its path under path.
func outOfRange(v any, path string) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return path, !finiteNumber(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the same path every time
		for _, k := range keys {
			if p, bad := outOfRange(x[k], path+"."+k); bad {
				return p, true
			}
		}
	case []any:
		for i, e := range x {
			if p, bad := outOfRange(e, path+"["+strconv.Itoa(i)+"]"); bad {
				return p, true
			}
		}
	}
	return "", false
}

// jsonNumber reports whether s is a number in JSON's grammar (no hex, no
// Inf or NaN, no leading +).
func jsonNumber(s string) (json.Number, bool) {
	if !json.Valid([]byte(s)) { // nothing but one value: not "1]", "1}", "1 2"
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	n, ok := v.(json.Number)
	return n, ok
}
