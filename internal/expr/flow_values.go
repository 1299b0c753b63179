package expr

import (
	"encoding/json"
	"sort"
	"unicode/utf8"
)

// The abstract values of the flow analysis: texts as characters whose
// values are unknown but whose classes and sources are, and the rendering
// of values as text (render over abstract values).

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
