package expr

import "strings"

// Template is a parsed template: literal text and {{ }} expressions. It is
// immutable, so one Template may be evaluated by many goroutines at once.
type Template struct {
	src   string
	parts []part
}

// part is a piece of a template: literal text, or an expression when e is
// not nil.
type part struct {
	text string
	e    *expression
}

// expression is one {{ }}: a root operand and its filters.
type expression struct {
	pos     int     // offset of "{{", where evaluation errors point
	root    string  // raw root operand, when literal is nil
	literal *string // a string literal root
	filters []filter
}

// Parse compiles a template. It returns an *Error whose Pos is the byte
// offset of the problem: an unclosed "{{", an unterminated string, an
// empty expression, an unknown filter (at its name), a filter given the
// wrong number or kind of arguments (at its name), or a malformed
// argument list. Templates longer than 64 KiB are refused.
func Parse(src string) (*Template, error) {
	if len(src) > maxTemplateBytes {
		return nil, errorAt(maxTemplateBytes, "template is longer than %d bytes", maxTemplateBytes)
	}
	t := &Template{src: src}
	for off := 0; off < len(src); {
		i := strings.Index(src[off:], "{{")
		if i < 0 {
			t.parts = append(t.parts, part{text: src[off:]})
			break
		}
		open := off + i
		if open > off {
			t.parts = append(t.parts, part{text: src[off:open]})
		}
		end, err := closing(src, open)
		if err != nil {
			return nil, err
		}
		e, err := parseExpression(src, open, end)
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, part{e: e})
		off = end + len("}}")
	}
	return t, nil
}

// closing returns the offset of the "}}" that ends the expression opened
// at open. Quoted strings are skipped, so a literal may hold "}}".
func closing(src string, open int) (int, error) {
	quote, quotePos := byte(0), 0
	for i := open + len("{{"); i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote, quotePos = c, i
		case c == '}' && i+1 < len(src) && src[i+1] == '}':
			return i, nil
		}
	}
	if quote != 0 && strings.Contains(src[open:], "}}") {
		// A "}}" exists but the open string swallowed it: the string
		// is the mistake, not the braces.
		return 0, errorAt(quotePos, "unterminated string literal")
	}
	return 0, errorAt(open, `"{{" has no matching "}}"`)
}

// Source returns the text the template was parsed from.
func (t *Template) Source() string { return t.src }

// HasExpressions reports whether the template holds any {{ }}; a template
// without one evaluates to its own text.
func (t *Template) HasExpressions() bool {
	for _, p := range t.parts {
		if p.e != nil {
			return true
		}
	}
	return false
}

// Roots returns the raw root operand of each expression, in order, so a
// caller can load what the template names (token ids, say) before Eval.
// String literal roots name nothing and are skipped.
func (t *Template) Roots() []string {
	var roots []string
	for _, p := range t.parts {
		if p.e != nil && p.e.literal == nil {
			roots = append(roots, p.e.root)
		}
	}
	return roots
}

// single reports whether the template is exactly one expression with no
// text around it, which Eval answers with the value itself.
func (t *Template) single() *expression {
	if len(t.parts) == 1 {
		return t.parts[0].e
	}
	return nil
}
