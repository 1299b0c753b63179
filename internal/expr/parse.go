package expr

import (
	"strings"
	"unicode/utf8"
)

// filter is one applied filter with its checked arguments.
type filter struct {
	name string
	pos  int // offset of the name, where parse errors about it point
	spec *filterSpec
	args []arg
}

// arg is a filter argument: an integer, a string literal or a boolean
// (true or false). A json path argument is also kept compiled, so Eval does
// not parse it again.
type arg struct {
	kind argKind
	n    int
	s    string
	b    bool
	path []pathStep
}

type argKind uint8

const (
	intArg argKind = iota + 1
	strArg
	boolArg
)

func (k argKind) String() string {
	switch k {
	case intArg:
		return "an integer"
	case boolArg:
		return "true or false"
	}
	return "a quoted string"
}

// parser reads one expression body: src[pos:end], end being its "}}".
// closing has already checked that its quotes are balanced.
type parser struct {
	src      string
	pos, end int
}

func parseExpression(src string, open, end int) (*expression, error) {
	p := &parser{src: src, pos: open + len("{{"), end: end}
	e := &expression{pos: open}
	p.space()
	if p.pos == p.end || p.src[p.pos] == '|' {
		return nil, errorAt(p.pos, "expression has no root operand")
	}
	if c := p.src[p.pos]; c == '\'' || c == '"' {
		s := p.str()
		e.literal = &s
		p.space()
		if p.pos < p.end && p.src[p.pos] != '|' {
			return nil, p.unexpected("after the string literal")
		}
	} else {
		e.root = p.raw()
	}
	for p.pos < p.end {
		if len(e.filters) == maxFilters {
			return nil, errorAt(p.pos, "an expression takes at most %d filters", maxFilters)
		}
		p.pos++ // the "|"
		f, err := p.filter()
		if err != nil {
			return nil, err
		}
		e.filters = append(e.filters, f)
	}
	return e, nil
}

// raw reads a root operand up to the first "|" outside quotes, trimmed. It
// is not interpreted: the Resolver decides what it means.
func (p *parser) raw() string {
	start := p.pos
	quote := byte(0)
	for ; p.pos < p.end; p.pos++ {
		c := p.src[p.pos]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '|':
			return strings.TrimRight(p.src[start:p.pos], spaces)
		}
	}
	return strings.TrimRight(p.src[start:p.pos], spaces)
}

// filter reads "name" or "name: arg, arg" and the spaces around it,
// stopping at the next "|" or the end.
func (p *parser) filter() (filter, error) {
	p.space()
	f := filter{pos: p.pos}
	for p.pos < p.end && !strings.ContainsRune(spaces+`:|,'"`, rune(p.src[p.pos])) {
		p.pos++
	}
	f.name = p.src[f.pos:p.pos]
	if f.name == "" {
		return f, errorAt(f.pos, "filter name is missing")
	}
	spec, ok := filters[f.name]
	if !ok {
		return f, errorAt(f.pos, "unknown filter %q", f.name)
	}
	f.spec = spec
	p.space()
	if p.pos < p.end && p.src[p.pos] == ':' {
		p.pos++
		for {
			p.space()
			a, err := p.arg()
			if err != nil {
				return f, err
			}
			f.args = append(f.args, a)
			p.space()
			if p.pos == p.end || p.src[p.pos] != ',' {
				break
			}
			p.pos++
		}
	}
	if p.pos < p.end && p.src[p.pos] != '|' {
		return f, p.unexpected("after filter " + f.name)
	}
	return f, spec.check(f)
}

// arg reads an integer (optionally negative), a quoted string, or the
// word true or false.
func (p *parser) arg() (arg, error) {
	start := p.pos
	if p.pos == p.end {
		return arg{}, errorAt(start, "argument is missing")
	}
	if c := p.src[p.pos]; c == '\'' || c == '"' {
		return arg{kind: strArg, s: p.str()}, nil
	}
	for _, w := range [...]string{"true", "false"} {
		if rest := p.src[p.pos:p.end]; strings.HasPrefix(rest, w) && (len(rest) == len(w) || !isNameByte(rest[len(w)])) {
			p.pos += len(w)
			return arg{kind: boolArg, b: w == "true"}, nil
		}
	}
	neg := p.src[p.pos] == '-'
	if neg {
		p.pos++
	}
	n, digits := 0, 0
	for ; p.pos < p.end && isDigit(p.src[p.pos]); p.pos++ {
		if n = n*10 + int(p.src[p.pos]-'0'); n > maxInt {
			return arg{}, errorAt(start, "integer is out of range ±%d", maxInt)
		}
		digits++
	}
	if digits == 0 {
		return arg{}, errorAt(start, "argument must be an integer, a quoted string, true or false")
	}
	if neg {
		n = -n
	}
	return arg{kind: intArg, n: n}, nil
}

// str reads a string literal at p.pos: 'x' or "x", no escapes, so a
// string holds any character but its own quote.
func (p *parser) str() string {
	q := p.src[p.pos]
	start := p.pos + 1
	i := strings.IndexByte(p.src[start:p.end], q)
	// closing saw every quote balanced before end, so i >= 0.
	p.pos = start + i + 1
	return p.src[start : start+i]
}

const spaces = " \t\r\n"

func (p *parser) space() {
	for p.pos < p.end && strings.IndexByte(spaces, p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// unexpected reports the character at p.pos.
func (p *parser) unexpected(where string) *Error {
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:p.end])
	return errorAt(p.pos, "unexpected %q %s", r, where)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isNameByte reports whether c may continue a word, so "trueish" is not
// read as true followed by garbage.
func isNameByte(c byte) bool {
	return isDigit(c) || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
