package expr

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Flow analysis: what a template's result may show of its variables,
// decided from the whole expression, not from patterns. See doc.go,
// "# What a result shows", for the rules. This file has the API (Sources,
// Flow, Inputs and their labels, Template.Flow); flow_values.go the
// abstract values; flow_filters.go, flow_encode.go and flow_keyed.go each
// filter's rule.

// Sources is a set of characters of a template's variables, numbered by
// the [Inputs] they come from. The zero value is empty.
type Sources struct{ spans []span }

// span is the sources lo..hi-1.
type span struct{ lo, hi int }

// Empty reports whether the set holds no character.
func (s Sources) Empty() bool { return len(s.spans) == 0 }

// Union returns the characters in s or in o.
func (s Sources) Union(o Sources) Sources {
	if len(o.spans) == 0 {
		return s
	}
	if len(s.spans) == 0 {
		return o
	}
	all := make([]span, 0, len(s.spans)+len(o.spans))
	all = append(append(all, s.spans...), o.spans...)
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	out := all[:1]
	for _, sp := range all[1:] {
		last := &out[len(out)-1]
		if sp.lo <= last.hi {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return Sources{spans: out}
}

// Minus returns the characters in s and not in o.
func (s Sources) Minus(o Sources) Sources {
	var out []span
	for _, sp := range s.spans {
		cur := []span{sp}
		for _, cut := range o.spans {
			var next []span
			for _, c := range cur {
				if cut.hi <= c.lo || cut.lo >= c.hi {
					next = append(next, c)
					continue
				}
				if c.lo < cut.lo {
					next = append(next, span{c.lo, cut.lo})
				}
				if cut.hi < c.hi {
					next = append(next, span{cut.hi, c.hi})
				}
			}
			cur = next
		}
		out = append(out, cur...)
	}
	return Sources{spans: out}
}

// Intersect returns the characters in both s and o.
func (s Sources) Intersect(o Sources) Sources { return s.Minus(s.Minus(o)) }

func one(id int) Sources { return Sources{spans: []span{{id, id + 1}}} }

// Flow is what a template's result may show of its variables.
type Flow struct {
	// Clear holds every character the result may depend on without a
	// key or randomness between them: shown as it is, or through any
	// function of it (a hash with a key written in the expression, a
	// case change, a replace) that someone who sees the result could
	// undo or test guesses against.
	Clear Sources
	// Exact holds the characters the result shows exactly as they are,
	// each at a place that depends on nothing hidden: what a key that
	// sees the result reads of the data.
	Exact Sources
}

// Union is what two results show together.
func (f Flow) Union(o Flow) Flow {
	return Flow{Clear: f.Clear.Union(o.Clear), Exact: f.Exact.Union(o.Exact)}
}

// Inputs are a template's variables with each character of their text
// labelled as a source, so that the flows of several templates over the
// same variables (a token's mask and its id) can be compared.
type Inputs struct {
	vars   *aval
	leaves map[string]span // variable path -> its characters
	next   int
}

// Analysed texts are bounded: a longer text is labelled as one blob (any
// result that reads it shows all of it), so that analysis stays cheap.
const (
	maxLabelledText  = 4096
	maxLabelledTotal = 1 << 16
)

// Label labels the variables of an analysis: vars as [Vars] takes them.
// Object keys, array lengths and the JSON type of each value are taken to
// be public (they are a token type's schema); every character of strings
// and numbers, and each boolean, is a source.
func Label(vars map[string]any) *Inputs {
	in := &Inputs{leaves: map[string]span{}}
	m := make(map[string]any, len(vars))
	for k, v := range vars {
		m[k] = v
	}
	in.vars = in.label("", m)
	return in
}

func (in *Inputs) label(path string, v any) *aval {
	switch x := v.(type) {
	case nil:
		return &aval{kind: vNil}
	case map[string]any:
		out := &aval{kind: vObj, obj: make(map[string]*aval, len(x))}
		for _, k := range sortedKeysAny(x) {
			out.obj[k] = in.label(join(path, k), x[k])
		}
		return out
	case []any:
		out := &aval{kind: vArr, arr: make([]*aval, len(x))}
		for i, e := range x {
			out.arr[i] = in.label(join(path, strconv.Itoa(i)), e)
		}
		return out
	case string:
		return in.text(path, vStr, x)
	case json.Number:
		return in.text(path, vNum, string(x))
	}
	// Booleans, float64 and anything else: one source for the value.
	id := in.next
	in.next++
	in.leaves[path] = span{id, id + 1}
	kind := vAny
	if _, ok := v.(bool); ok {
		kind = vBool
	}
	return &aval{kind: kind, blob: true, clear: one(id)}
}

func (in *Inputs) text(path string, kind vkind, s string) *aval {
	n := utf8.RuneCountInString(s)
	sp := span{in.next, in.next + n}
	in.next += n
	in.leaves[path] = sp
	if n > maxLabelledText || in.next > maxLabelledTotal {
		v := &aval{kind: kind, blob: true}
		if n > 0 {
			v.clear = Sources{spans: []span{sp}}
		}
		return v
	}
	v := &aval{kind: kind, s: make([]achar, 0, n)}
	id := sp.lo
	for _, r := range s {
		c := achar{cls: classOf(r), clear: one(id), exact: id}
		if c.cls == clSpace || c.cls == clDash {
			// The class of a character is public, and these classes
			// hold one character each.
			c = konstChar(r)
		}
		v.s = append(v.s, c)
		id++
	}
	return v
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeysAny(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Chars returns the characters from..to-1 (in runes) of the text of the
// variable at path (data.number), or an empty set if there is none.
func (in *Inputs) Chars(path string, from, to int) Sources {
	sp, ok := in.leaves[path]
	if !ok {
		return Sources{}
	}
	lo, hi := sp.lo+max(from, 0), min(sp.lo+to, sp.hi)
	if lo >= hi {
		return Sources{}
	}
	return Sources{spans: []span{{lo, hi}}}
}

// Only returns the inputs with only the variables named: the same labels
// (flows over both compare), fewer variables to read. A mask, which reads
// data only, is analysed over in.Only("data") beside an id that may also
// read metadata.
func (in *Inputs) Only(names ...string) *Inputs {
	out := &Inputs{vars: &aval{kind: vObj, obj: map[string]*aval{}}, leaves: in.leaves, next: in.next}
	for _, n := range names {
		if v := in.vars.obj[n]; v != nil {
			out.vars.obj[n] = v
		}
	}
	return out
}

// resolve is Vars's resolver over the labelled variables.
func (in *Inputs) resolve(root string) *aval {
	segs := strings.Split(root, ".")
	for _, s := range segs {
		if s == "" || strings.IndexFunc(s, func(r rune) bool { return !isNameRune(r) }) >= 0 {
			return failed()
		}
	}
	v := in.vars
	for _, s := range segs {
		switch v.kind {
		case vObj:
			if v = v.obj[s]; v == nil {
				return &aval{kind: vNil}
			}
		case vArr:
			i, err := strconv.Atoi(s)
			if err != nil || s != "0" && (s[0] == '0' || strings.Trim(s, "0123456789") != "") || i >= len(v.arr) {
				return &aval{kind: vNil}
			}
			v = v.arr[i]
		case vAny:
			return blobOf(v, vAny)
		default:
			return &aval{kind: vNil}
		}
	}
	return v
}

// Flow analyses the template over in: what its result may show of the
// variables, whatever the characters they hold (their shape aside; see
// [Label]). A template that would fail to evaluate shows nothing.
func (t *Template) Flow(in *Inputs) Flow {
	return flowOf(t.analyse(in))
}

func flowOf(v *aval) Flow {
	var f Flow
	f.Clear, _ = v.gather()
	var exact func(v *aval)
	exact = func(v *aval) {
		for _, c := range v.s {
			if c.exact >= 0 {
				f.Exact = f.Exact.Union(one(c.exact))
			}
		}
		for _, k := range sortedKeys(v.obj) {
			exact(v.obj[k])
		}
		for _, e := range v.arr {
			exact(e)
		}
	}
	if !v.blob {
		exact(v)
	}
	return f
}

// analyse is eval over abstract values.
func (t *Template) analyse(in *Inputs) *aval {
	if e := t.single(); e != nil {
		return analyseExpr(in, e)
	}
	parts := make([]*aval, 0, len(t.parts))
	for _, p := range t.parts {
		if p.e == nil {
			parts = append(parts, konstText(p.text))
			continue
		}
		parts = append(parts, toText(analyseExpr(in, p.e)))
	}
	return concat(parts...)
}

func analyseExpr(in *Inputs, e *expression) *aval {
	var v *aval
	if e.literal != nil {
		v = konstText(*e.literal)
	} else {
		v = in.resolve(e.root)
	}
	for _, f := range e.filters {
		if f.spec.flow == nil {
			// A filter with no rule shows everything it reads.
			v = blobOf(v, vAny)
			continue
		}
		v = f.spec.flow(v, f.args)
	}
	return v
}
