package jsrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// Program is compiled code whose module.exports is a function. It is
// immutable and may be run by any Runtime, concurrently.
type Program struct {
	prog *goja.Program
	hash string
}

// Hash is the hex SHA-256 of the code.
func (p *Program) Hash() string { return p.hash }

// CompileError explains why Compile refused code.
type CompileError struct {
	Line, Column int    // 1-based position of a syntax error; 0 when not applicable
	Message      string // never includes host paths or Go stack
	NotAFunction bool   // true when the code compiled but does not export a function
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// The module wrapper, as Node's: the code is a function body with exports,
// require and module in scope. The head stays on the code's first line so
// line numbers need no shifting.
const (
	wrapHead = "(function (exports, require, module) {"
	wrapTail = "\n})"
)

// Compile checks code and caches the result by SHA-256 of the code. It
// returns *CompileError for code over Options.MaxCodeBytes, a syntax error
// (with its position), a module body that throws or hits a limit when run
// once in a scratch sandbox, or a module.exports that is not a function
// (NotAFunction).
func (r *Runtime) Compile(code string) (*Program, error) {
	if len(code) > r.opts.MaxCodeBytes {
		return nil, &CompileError{Message: fmt.Sprintf("the code is %d bytes; the limit is %d bytes", len(code), r.opts.MaxCodeBytes)}
	}
	key := sha256.Sum256([]byte(code))
	if p, ce, ok := r.cache.get(key); ok {
		if ce != nil {
			c := *ce
			return nil, &c
		}
		return p, nil
	}
	p, ce, cacheable := r.compile(code, key)
	if cacheable {
		r.cache.put(key, p, ce)
	}
	if ce != nil {
		c := *ce
		return nil, &c
	}
	return p, nil
}

// compile does the work of Compile; cacheable is false for outcomes that
// may differ next time (a limit hit while loading the module).
func (r *Runtime) compile(code string, key [32]byte) (p *Program, ce *CompileError, cacheable bool) {
	src := wrapHead + code + wrapTail
	ast, err := parser.ParseFile(nil, "code.js", src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, parseError(err, code), true
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, compileError(err, code), true
	}
	p = &Program{prog: prog, hash: hex.EncodeToString(key[:])}
	out, err := r.execute(context.Background(), func(s *session) (any, error) {
		_, err := s.loadModule(p)
		if err == errNotAFunction {
			return false, nil
		}
		return true, err
	})
	var je *Error
	switch {
	case err == nil && out == true:
		return p, nil, true
	case err == nil:
		return nil, &CompileError{NotAFunction: true, Message: "module.exports is not a function"}, true
	case errors.As(err, &je) && je.Kind == Thrown:
		msg := je.Message
		if je.Class != "" && je.Class != "Error" {
			msg = je.Class + ": " + msg
		}
		return nil, &CompileError{Message: "loading the module threw: " + msg}, true
	case errors.As(err, &je):
		return nil, &CompileError{Message: "loading the module failed: " + je.Message}, false
	}
	return nil, &CompileError{Message: "loading the module failed"}, false
}

// parseError turns a parser error into a CompileError positioned in code.
func parseError(err error, code string) *CompileError {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return positioned(e.Message, e.Position.Line, e.Position.Column, code)
	}
	var one *parser.Error
	if errors.As(err, &one) {
		return positioned(one.Message, one.Position.Line, one.Position.Column, code)
	}
	return &CompileError{Message: "the code is not valid JavaScript"}
}

// compileError turns a goja compiler error (early errors such as a
// redeclared let) into a CompileError.
func compileError(err error, code string) *CompileError {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		if se.File != nil {
			pos := se.File.Position(se.Offset)
			return positioned(se.Message, pos.Line, pos.Column, code)
		}
		return &CompileError{Message: se.Message}
	}
	var re *goja.CompilerReferenceError
	if errors.As(err, &re) {
		return &CompileError{Message: re.Message}
	}
	return &CompileError{Message: "the code is not valid JavaScript"}
}

// positioned maps a position in the wrapped source to one in code. An
// error past the end of code (in the wrapper's tail) means the code ended
// too early, for example with an unclosed brace.
func positioned(msg string, line, col int, code string) *CompileError {
	if msg == "Unexpected token ILLEGAL" { // goja's name for it; V8's wording
		msg = "Invalid or unexpected token"
	}
	lines := strings.Count(code, "\n") + 1
	if line > lines {
		last := code[strings.LastIndexByte(code, '\n')+1:]
		return &CompileError{Line: lines, Column: len(last) + 1, Message: "Unexpected end of input"}
	}
	if line == 1 {
		col -= len(wrapHead)
	}
	return &CompileError{Line: max(line, 1), Column: max(col, 1), Message: msg}
}
