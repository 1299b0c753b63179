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
// "# What a result shows", for the rules; this file has the abstract
// values and the variables' labels, flow_filters.go each filter's rule.

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

// class is a set of character classes. The class of each character of a
// variable (an ASCII digit, uppercase or lowercase letter, a space, a
// dash, or anything else) and the number of characters are its shape,
// which the analysis takes to be public: it is what a format-preserving
// alias or encryption keeps on purpose.
type class uint8

const (
	clDigit class = 1 << iota
	clUpper
	clLower
	clSpace
	clDash
	clOther
)

func classOf(r rune) class {
	switch {
	case '0' <= r && r <= '9':
		return clDigit
	case 'A' <= r && r <= 'Z':
		return clUpper
	case 'a' <= r && r <= 'z':
		return clLower
	case r == ' ':
		return clSpace
	case r == '-':
		return clDash
	}
	return clOther
}

// achar is one character of an abstract text: a known character
// (konst), or an unknown one with the classes it may be in, the sources
// it shows in clear, the source it is an exact copy of (-1: none), and
// whether it is drawn at random or enciphered under a key (opaque: it may
// change from one evaluation to another without showing anything).
type achar struct {
	r      rune
	konst  bool
	cls    class
	clear  Sources
	exact  int
	opaque bool
}

func konstChar(r rune) achar { return achar{r: r, konst: true, cls: classOf(r), exact: -1} }

// is reports whether c is certainly in classes cl.
func (c achar) is(cl class) bool { return c.cls != 0 && c.cls&^cl == 0 }

// mayBe reports whether c may be the character r.
func (c achar) mayBe(r rune) bool {
	if c.konst {
		return c.r == r
	}
	return c.cls&classOf(r) != 0
}

// derived is a character computed from c without a key: it shows what c
// shows, and is no longer an exact copy.
func (c achar) derived(cls class) achar {
	return achar{cls: cls, clear: c.clear, exact: -1, opaque: c.opaque}
}

type vkind uint8

const (
	vStr vkind = iota
	vNum
	vBool
	vNil
	vObj
	vArr
	vAny // a value of unknown type: blob
)

// aval is an abstract value. A text of unknown length, or a value of
// unknown type, is a blob: what it shows is clear, and opaque says
// whether randomness or a key went into it.
type aval struct {
	kind   vkind
	s      []achar
	blob   bool
	clear  Sources
	opaque bool
	obj    map[string]*aval
	arr    []*aval
}

func konstText(s string) *aval {
	v := &aval{kind: vStr, s: make([]achar, 0, len(s))}
	for _, r := range s {
		v.s = append(v.s, konstChar(r))
	}
	return v
}

// gather is everything v shows and whether it holds opaque parts.
func (v *aval) gather() (Sources, bool) {
	clear, opaque := v.clear, v.opaque
	for _, c := range v.s {
		clear, opaque = clear.Union(c.clear), opaque || c.opaque
	}
	for _, k := range sortedKeys(v.obj) {
		c, o := v.obj[k].gather()
		clear, opaque = clear.Union(c), opaque || o
	}
	for _, e := range v.arr {
		c, o := e.gather()
		clear, opaque = clear.Union(c), opaque || o
	}
	return clear, opaque
}

// blobOf is a value of kind k that shows everything v shows, anywhere.
func blobOf(v *aval, k vkind) *aval {
	c, o := v.gather()
	return &aval{kind: k, blob: true, clear: c, opaque: o}
}

// failed is the value of an evaluation that fails whatever the hidden
// characters are: it shows nothing.
func failed() *aval { return &aval{kind: vAny, blob: true} }

func sortedKeys(m map[string]*aval) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// concat joins texts; one of unknown length makes the whole a blob.
func concat(parts ...*aval) *aval {
	out := &aval{kind: vStr}
	for _, p := range parts {
		if p.blob {
			c, o := p.gather()
			out.blob, out.clear, out.opaque = true, out.clear.Union(c), out.opaque || o
			continue
		}
		out.s = append(out.s, p.s...)
	}
	if out.blob {
		return blobOf(out, vStr)
	}
	return out
}

// toText is render over abstract values: the text a text filter reads.
func toText(v *aval) *aval {
	switch v.kind {
	case vStr, vNum:
		if v.blob {
			return blobOf(v, vStr)
		}
		return &aval{kind: vStr, s: v.s}
	case vNil:
		return &aval{kind: vStr}
	case vObj, vArr:
		return jsonText(v)
	}
	return blobOf(v, vStr)
}

// jsonText is the JSON encoding of an object or array. A character that
// JSON may escape (anything but ASCII letters, digits, spaces and dashes)
// makes the length unknown: the text is then a blob.
func jsonText(v *aval) *aval {
	var parts []*aval
	var walk func(v *aval) bool
	walk = func(v *aval) bool {
		switch v.kind {
		case vObj:
			parts = append(parts, konstText("{"))
			for i, k := range sortedKeys(v.obj) {
				if i > 0 {
					parts = append(parts, konstText(","))
				}
				kb, _ := json.Marshal(k)
				parts = append(parts, konstText(string(kb)+":"))
				if !walk(v.obj[k]) {
					return false
				}
			}
			parts = append(parts, konstText("}"))
		case vArr:
			parts = append(parts, konstText("["))
			for i, e := range v.arr {
				if i > 0 {
					parts = append(parts, konstText(","))
				}
				if !walk(e) {
					return false
				}
			}
			parts = append(parts, konstText("]"))
		case vNil:
			parts = append(parts, konstText("null"))
		case vNum:
			if v.blob {
				return false
			}
			parts = append(parts, v)
		case vStr:
			if v.blob {
				return false
			}
			for _, c := range v.s {
				if c.konst {
					if b, _ := json.Marshal(string(c.r)); len(b) != 2+utf8.RuneLen(c.r) {
						return false
					}
				} else if c.cls&clOther != 0 {
					return false
				}
			}
			parts = append(parts, konstText(`"`), &aval{kind: vStr, s: v.s}, konstText(`"`))
		default:
			return false
		}
		return true
	}
	if !walk(v) {
		return blobOf(v, vStr)
	}
	return concat(parts...)
}
