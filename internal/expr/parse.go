package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits that bound the work any input can cause.
const (
	maxTemplateBytes = 64 << 10
	maxFilters       = 100
	maxWidth         = 4096
)

// Error is a parse or evaluation error at a byte offset of the template.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("position %d: %s", e.Pos, e.Msg) }

func errorAt(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Template is a parsed template: literal text and {{ }} expressions.
type Template struct {
	src   string
	parts []part
}

type part struct {
	text string      // literal text, when e is nil
	e    *expression // an expression
}

type expression struct {
	pos     int     // offset of "{{"
	root    string  // raw root operand, when literal is nil
	literal *string // a string literal root
	filters []filter
}

type filter struct {
	name string
	pos  int
	args []arg
}

// arg is a filter argument: an integer or a string literal.
type arg struct {
	isInt bool
	n     int
	s     string
}

// Source returns the text the template was parsed from.
func (t *Template) Source() string { return t.src }

// HasExpressions reports whether the template holds any {{ }}.
func (t *Template) HasExpressions() bool {
	for _, p := range t.parts {
		if p.e != nil {
			return true
		}
	}
	return false
}

// Roots returns the raw root operand of each expression, in order; string
// literal roots are skipped.
func (t *Template) Roots() []string {
	var roots []string
	for _, p := range t.parts {
		if p.e != nil && p.e.literal == nil {
			roots = append(roots, p.e.root)
		}
	}
	return roots
}

// Parse compiles a template. Errors are *Error.
func Parse(src string) (*Template, error) {
	if len(src) > maxTemplateBytes {
		return nil, errorAt(0, "template is longer than %d bytes", maxTemplateBytes)
	}
	t := &Template{src: src}
	rest, off := src, 0
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if rest != "" {
				t.parts = append(t.parts, part{text: rest})
			}
			return t, nil
		}
		if i > 0 {
			t.parts = append(t.parts, part{text: rest[:i]})
		}
		start := off + i
		end := closing(src, start+2)
		if end < 0 {
			return nil, errorAt(start, "{{ is not closed by }}")
		}
		e, err := parseExpression(src, start, start+2, end)
		if err != nil {
			return nil, err
		}
		t.parts = append(t.parts, part{e: e})
		off = end + 2
		rest = src[off:]
	}
}

// closing finds the "}}" that ends an expression whose body starts at i,
// skipping quoted strings. It returns -1 if there is none.
func closing(src string, i int) int {
	var quote byte
	for ; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '}' && i+1 < len(src) && src[i+1] == '}':
			return i
		}
	}
	return -1
}

// splitTop splits s on sep outside quotes, returning the pieces with their
// offsets in s.
func splitTop(s string, sep byte) (pieces []string, offsets []int) {
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == sep:
			pieces, offsets = append(pieces, s[start:i]), append(offsets, start)
			start = i + 1
		}
	}
	return append(pieces, s[start:]), append(offsets, start)
}

// trimmed returns s without surrounding spaces and the offset of what is
// left.
func trimmed(s string, off int) (string, int) {
	t := strings.TrimLeft(s, " \t\r\n")
	off += len(s) - len(t)
	return strings.TrimRight(t, " \t\r\n"), off
}

func parseExpression(src string, pos, from, to int) (*expression, error) {
	e := &expression{pos: pos}
	pieces, offsets := splitTop(src[from:to], '|')
	if len(pieces)-1 > maxFilters {
		return nil, errorAt(pos, "more than %d filters", maxFilters)
	}
	root, rootPos := trimmed(pieces[0], from+offsets[0])
	switch {
	case root == "":
		return nil, errorAt(rootPos, "expression is empty")
	case root[0] == '\'' || root[0] == '"':
		s, ok := unquote(root)
		if !ok {
			return nil, errorAt(rootPos, "malformed string literal")
		}
		e.literal = &s
	default:
		e.root = root
	}
	for i := 1; i < len(pieces); i++ {
		f, err := parseFilter(pieces[i], from+offsets[i])
		if err != nil {
			return nil, err
		}
		e.filters = append(e.filters, f)
	}
	return e, nil
}

// unquote reads a whole quoted string: 'x' or "x", no escapes.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != s[len(s)-1] || (s[0] != '\'' && s[0] != '"') {
		return "", false
	}
	inner := s[1 : len(s)-1]
	if strings.IndexByte(inner, s[0]) >= 0 {
		return "", false
	}
	return inner, true
}

func parseFilter(s string, off int) (filter, error) {
	body, pos := trimmed(s, off)
	name, argText, hasArgs := strings.Cut(body, ":")
	name = strings.TrimSpace(name)
	f := filter{name: name, pos: pos}
	if name == "" {
		return f, errorAt(pos, "filter name is missing")
	}
	spec, ok := filters[name]
	if !ok {
		return f, errorAt(pos, "unknown filter %q", name)
	}
	if hasArgs {
		argOff := pos + len(body) - len(argText)
		pieces, offsets := splitTop(argText, ',')
		for i, p := range pieces {
			a, apos := trimmed(p, argOff+offsets[i])
			v, err := parseArg(a, apos)
			if err != nil {
				return f, err
			}
			f.args = append(f.args, v)
		}
	}
	if err := spec.checkArgs(f); err != nil {
		return f, err
	}
	return f, nil
}

func parseArg(s string, pos int) (arg, error) {
	if s == "" {
		return arg{}, errorAt(pos, "argument is missing")
	}
	if s[0] == '\'' || s[0] == '"' {
		v, ok := unquote(s)
		if !ok {
			return arg{}, errorAt(pos, "malformed string literal")
		}
		return arg{s: v}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return arg{}, errorAt(pos, "argument %q is neither a number nor a quoted string", s)
	}
	return arg{isInt: true, n: n}, nil
}
