package expr

import (
	"encoding/json"
	"strings"
	"unicode"
)

// The flow rule of each filter: what its result shows of what it reads.
// A filter without one shows everything it reads, anywhere
// (analyseExpr), and TestEveryFilterHasAFlowRule keeps the table full.
// fpe and fpe_tweaked set theirs where they are declared (fpe.go).

func init() {
	rules := map[string]func(v *aval, a []arg) *aval{
		"last4": textRule(func(s []achar, _ []arg) *aval {
			return &aval{kind: vStr, s: s[max(0, len(s)-4):]}
		}),
		"reveal_last": textRule(func(s []achar, a []arg) *aval { return maskFlow(s, 0, a[0].n, optString(a, 1, "X")) }),
		"reveal":      textRule(func(s []achar, a []arg) *aval { return maskFlow(s, a[0].n, a[1].n, optString(a, 2, "X")) }),
		"slice":       sliceFlow,
		"pad_left":    textRule(padFlow(true)),
		"pad_right":   textRule(padFlow(false)),
		"stringify":   func(v *aval, _ []arg) *aval { return toText(v) },
		"to_string":   func(v *aval, _ []arg) *aval { return toText(v) },
		"json":        jsonFlow,
		"upcase":      textRule(caseFlow(unicode.ToUpper, clLower, clUpper)),
		"downcase":    textRule(caseFlow(unicode.ToLower, clUpper, clLower)),
		"replace":     textRule(func(s []achar, a []arg) *aval { return replaceFlow(s, a[0].s, a[1].s) }),
		"remove":      textRule(func(s []achar, a []arg) *aval { return replaceFlow(s, a[0].s, "") }),
		"split":       textRule(splitFlow),
		"card_bin": textRule(func(s []achar, _ []arg) *aval {
			return cardFlow(s, 6, func(d, n int, c achar) achar { return c }, true)
		}),
		"card_mask": textRule(func(s []achar, _ []arg) *aval {
			return cardFlow(s, 13, func(d, n int, c achar) achar {
				if d >= 6 && d < n-4 {
					return konstChar('X')
				}
				return c
			}, false)
		}),
		"card_exp":   cardExpFlow,
		"to_number":  toNumberFlow,
		"to_boolean": func(v *aval, _ []arg) *aval { return blobOf(v, vBool) },
		"hmac":       textBlobRule(hmacFlow),
		"to_base64":  textRule(base64Flow),
		"to_base16":  textRule(base16Flow),

		"alias_card":            textRule(aliasCardFlow),
		"alias_preserve_format": textRule(aliasFormatFlow),
		"alias_preserve_length": textRule(aliasLengthFlow),
	}
	for name, rule := range rules {
		filters[name].flow = rule
	}
}

// textRule is the rule of a text filter: its input rendered, and a text
// of unknown length (a blob) giving a blob that shows all it shows.
func textRule(f func(s []achar, a []arg) *aval) func(*aval, []arg) *aval {
	return func(v *aval, a []arg) *aval {
		t := toText(v)
		if t.blob {
			return t
		}
		return f(t.s, a)
	}
}

// textBlobRule is textRule for filters that also take a blob.
func textBlobRule(f func(t *aval, a []arg) *aval) func(*aval, []arg) *aval {
	return func(v *aval, a []arg) *aval { return f(toText(v), a) }
}

func str(s []achar) *aval { return &aval{kind: vStr, s: s} }

// maskFlow is maskRunes: the kept characters as they are, the others the
// mask character.
func maskFlow(s []achar, first, last int, c string) *aval {
	if first+last >= len(s) {
		return str(s)
	}
	r := []rune(c)[0]
	out := append([]achar{}, s[:first]...)
	for range len(s) - first - last {
		out = append(out, konstChar(r))
	}
	return str(append(out, s[len(s)-last:]...))
}

func sliceFlow(v *aval, a []arg) *aval {
	bounds := sliceBounds(a)
	switch {
	case v.kind == vArr:
		i, j := bounds(len(v.arr))
		return &aval{kind: vArr, arr: append([]*aval{}, v.arr[i:j]...)}
	case v.kind == vAny:
		return blobOf(v, vAny) // an array or a text: unknown
	}
	t := toText(v)
	if t.blob {
		return t
	}
	i, j := bounds(len(t.s))
	return str(t.s[i:j])
}

func padFlow(left bool) func(s []achar, a []arg) *aval {
	return func(s []achar, a []arg) *aval {
		n := a[0].n - len(s)
		if n <= 0 {
			return str(s)
		}
		fill := make([]achar, n)
		for i := range fill {
			fill[i] = konstChar([]rune(optString(a, 1, " "))[0])
		}
		if left {
			return str(append(fill, s...))
		}
		return str(append(append([]achar{}, s...), fill...))
	}
}

// caseFlow maps known characters, and moves the letter class from to
// to: a digit, space or dash is unchanged and stays an exact copy.
func caseFlow(m func(rune) rune, from, to class) func(s []achar, _ []arg) *aval {
	return func(s []achar, _ []arg) *aval {
		out := make([]achar, len(s))
		for i, c := range s {
			switch {
			case c.konst:
				out[i] = konstChar(m(c.r))
			case c.cls&(from|clOther) == 0:
				out[i] = c
			default:
				cls := c.cls
				if cls&from != 0 {
					cls = cls&^from | to
				}
				out[i] = c.derived(cls)
			}
		}
		return str(out)
	}
}

// replaceFlow is replaceAll. When no unknown character may be any
// character of from, every match lies within known characters and the
// result is computed on them; a one-character from and to map each
// character on its own; anything else has a length that depends on the
// data: a blob.
func replaceFlow(s []achar, from, to string) *aval {
	if from == "" {
		return str(s)
	}
	mayMatch := false
	for _, c := range s {
		for _, r := range from {
			if !c.konst && c.mayBe(r) {
				mayMatch = true
			}
		}
	}
	if !mayMatch {
		var out []achar
		var run strings.Builder
		flush := func() {
			for _, r := range strings.ReplaceAll(run.String(), from, to) {
				out = append(out, konstChar(r))
			}
			run.Reset()
		}
		for _, c := range s {
			if c.konst {
				run.WriteRune(c.r)
				continue
			}
			flush()
			out = append(out, c)
		}
		flush()
		return str(out)
	}
	fr, tr := []rune(from), []rune(to)
	if len(fr) == 1 && len(tr) == 1 {
		out := make([]achar, len(s))
		for i, c := range s {
			switch {
			case c.konst && c.r == fr[0]:
				out[i] = konstChar(tr[0])
			case c.konst || !c.mayBe(fr[0]):
				out[i] = c
			default:
				out[i] = c.derived(c.cls | classOf(tr[0]))
			}
		}
		return str(out)
	}
	return blobOf(str(s), vStr)
}

// splitFlow is split: exact when no unknown character may be a
// character of sep, as for replace.
func splitFlow(s []achar, a []arg) *aval {
	sep := []rune(a[0].s)
	out := &aval{kind: vArr}
	if len(s) == 0 {
		return out
	}
	if len(sep) == 0 {
		for _, c := range s {
			out.arr = append(out.arr, str([]achar{c}))
		}
		return out
	}
	for _, c := range s {
		for _, r := range sep {
			if !c.konst && c.mayBe(r) {
				return blobOf(str(s), vAny)
			}
		}
	}
	cur := []achar{}
	for i := 0; i < len(s); {
		if matchAt(s, i, sep) {
			out.arr = append(out.arr, str(cur))
			cur = []achar{}
			i += len(sep)
			continue
		}
		cur = append(cur, s[i])
		i++
	}
	out.arr = append(out.arr, str(cur))
	return out
}

func matchAt(s []achar, i int, sep []rune) bool {
	if i+len(sep) > len(s) {
		return false
	}
	for j, r := range sep {
		if !s[i+j].konst || s[i+j].r != r {
			return false
		}
	}
	return true
}

// cardFlow walks a card number (digits with spaces and dashes between
// them): each digit is given to f with its index and the number of
// digits. A text whose characters are not certainly digits or certainly
// separators is a blob; fewer than least digits fail. With bin, the
// result is the first six digits only (card_bin).
func cardFlow(s []achar, least int, f func(d, n int, c achar) achar, bin bool) *aval {
	n, ok := cardShape(s)
	if !ok {
		return blobOf(str(s), vStr)
	}
	if n < least {
		return failed()
	}
	out := make([]achar, 0, len(s))
	d := 0
	for _, c := range s {
		if c.is(clDigit) {
			if bin && d >= 6 {
				break
			}
			out = append(out, f(d, n, c))
			d++
		} else if !bin {
			out = append(out, c)
		}
	}
	return str(out)
}

// cardShape counts the digits of a card-shaped text: false unless each
// character is certainly a digit or certainly a space or dash, and none
// is anything else (cardDigits would refuse it).
func cardShape(s []achar) (int, bool) {
	n := 0
	for _, c := range s {
		switch {
		case c.is(clDigit):
			n++
		case c.konst && (c.r == ' ' || c.r == '-'):
		default:
			return 0, false
		}
	}
	return n, true
}

func cardExpFlow(v *aval, _ []arg) *aval {
	if v.kind != vObj && v.kind != vAny {
		return failed()
	}
	if v.kind == vAny {
		return blobOf(v, vStr)
	}
	out := &aval{kind: vStr, blob: true}
	for _, k := range []string{"expiration_month", "expiration_year"} {
		if f := v.obj[k]; f != nil {
			c, o := f.gather()
			out.clear, out.opaque = out.clear.Union(c), out.opaque || o
		}
	}
	return out
}

func toNumberFlow(v *aval, _ []arg) *aval {
	switch v.kind {
	case vNum:
		return v
	case vStr:
		if v.blob {
			return blobOf(v, vNum)
		}
		return &aval{kind: vNum, s: v.s}
	case vAny:
		return blobOf(v, vAny)
	}
	return failed()
}

func jsonFlow(v *aval, a []arg) *aval {
	switch v.kind {
	case vNil:
		return failed()
	case vStr:
		if v.blob {
			return blobOf(v, vAny)
		}
		var b strings.Builder
		for _, c := range v.s {
			if !c.konst {
				return blobOf(v, vAny) // JSON read from the data: unknown shape
			}
			b.WriteRune(c.r)
		}
		x, err := decodeJSON(b.String())
		if err != nil {
			return failed()
		}
		v = konstTree(x)
	case vAny:
		return blobOf(v, vAny)
	}
	for _, st := range a[0].path {
		switch v.kind {
		case vObj:
			next, ok := v.obj[st.key]
			if st.isIdx || !ok {
				return failed()
			}
			v = next
		case vArr:
			if !st.isIdx || st.index >= len(v.arr) {
				return failed()
			}
			v = v.arr[st.index]
		case vAny:
			return blobOf(v, vAny)
		default:
			return failed()
		}
	}
	return v
}

// konstTree is a value known in full: JSON decoded from a literal.
func konstTree(x any) *aval {
	switch t := x.(type) {
	case nil:
		return &aval{kind: vNil}
	case map[string]any:
		v := &aval{kind: vObj, obj: make(map[string]*aval, len(t))}
		for k, e := range t {
			v.obj[k] = konstTree(e)
		}
		return v
	case []any:
		v := &aval{kind: vArr, arr: make([]*aval, len(t))}
		for i, e := range t {
			v.arr[i] = konstTree(e)
		}
		return v
	case string:
		return konstText(t)
	case json.Number:
		v := konstText(string(t))
		v.kind = vNum
		return v
	}
	return &aval{kind: vAny, blob: true} // a boolean: known, but not as text here
}
