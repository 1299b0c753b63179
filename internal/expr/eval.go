package expr

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// Resolver returns the value of a root operand: the raw text before the
// first "|" of an expression.
type Resolver func(root string) (any, error)

// Eval evaluates the template. A template that is exactly one expression
// gives that expression's value with its JSON type; any other template
// gives a string, each value rendered in place (see Stringify).
func (t *Template) Eval(resolve Resolver) (any, error) {
	if len(t.parts) == 1 && t.parts[0].e != nil {
		return t.parts[0].e.eval(resolve)
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.e == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := p.e.eval(resolve)
		if err != nil {
			return nil, err
		}
		b.WriteString(Stringify(v))
	}
	return b.String(), nil
}

func (e *expression) eval(resolve Resolver) (any, error) {
	var v any
	if e.literal != nil {
		v = *e.literal
	} else {
		var err error
		if v, err = resolve(e.root); err != nil {
			if xe, ok := err.(*Error); ok {
				return nil, xe
			}
			return nil, errorAt(e.pos, "%s", err.Error())
		}
	}
	for _, f := range e.filters {
		var err error
		if v, err = filters[f.name].fn(v, f.args); err != nil {
			return nil, errorAt(f.pos, "%s: %s", f.name, err.Error())
		}
	}
	return v, nil
}

// Stringify renders a value as text: strings as they are, nil as "",
// numbers in their shortest form, booleans as true or false, objects and
// arrays as JSON.
func Stringify(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Vars resolves dotted paths against named variables: "data" is
// vars["data"], "data.number" its "number" property, and a numeric segment
// indexes an array ("data.items.0"). Anything missing is nil, as in
// Liquid; a malformed path is an error.
func Vars(vars map[string]any) Resolver {
	return func(root string) (any, error) {
		segs := strings.Split(root, ".")
		for _, s := range segs {
			if !validSegment(s) {
				return nil, errorf("%q is not a variable path", root)
			}
		}
		var v any = vars
		for _, s := range segs {
			v = step(v, s)
		}
		return v, nil
	}
}

func validSegment(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// step reads one path segment from v.
func step(v any, seg string) any {
	switch x := v.(type) {
	case map[string]any:
		return x[seg]
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return nil
		}
		return x[i]
	}
	return nil
}
