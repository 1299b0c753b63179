package jsrt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCompileSyntaxErrors(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		code string
		want CompileError
	}{
		{"first line", "module.exports = function (a b) {}", CompileError{Line: 1, Column: 30, Message: "Unexpected identifier"}},
		{"second line", "module.exports = function () {\n  var x = ;\n}", CompileError{Line: 2, Column: 11, Message: "Unexpected token ;"}},
		{"third line", "// comment\nmodule.exports = async (req) => {\n  return req..args\n}", CompileError{Line: 3, Column: 13, Message: "Invalid or unexpected token"}},
		{"redeclared", "let a = 1;\nlet a = 2;\nmodule.exports = () => a", CompileError{Line: 2, Column: 5, Message: "Identifier 'a' has already been declared"}},
		{"unclosed brace", "module.exports = function () {\n  return 1;", CompileError{Line: 2, Column: 12, Message: "Unexpected end of input"}},
		{"unclosed string", "module.exports = () => 'abc", CompileError{Line: 1, Column: 24, Message: "Invalid or unexpected token"}},
		{"top-level await", "await 1;\nmodule.exports = () => 1", CompileError{Line: 1, Column: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Compile(tc.code)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) = %v, want a *CompileError", tc.code, err)
			}
			got := *ce
			if tc.want.Message == "" {
				got.Message = "" // the parser's wording does not matter here
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compile(%q) error mismatch (-want +got):\n%s", tc.code, diff)
			}
			checkSafe(t, ce.Error())
			if ce.Line > 0 && !strings.HasPrefix(ce.Error(), fmt.Sprintf("line %d, column %d: ", ce.Line, ce.Column)) {
				t.Errorf("Error() = %q, want the position first", ce.Error())
			}
		})
	}
}

func TestCompileNotAFunction(t *testing.T) {
	r := New(Options{})
	for _, code := range []string{
		"",
		"module.exports = 42",
		"module.exports = {handler: function () {}}",
		"exports.handler = function () {}",
		"exports = function () {}",
		"module.exports = Promise.resolve(function () {})",
	} {
		_, err := r.Compile(code)
		var ce *CompileError
		if !errors.As(err, &ce) || !ce.NotAFunction || ce.Line != 0 {
			t.Errorf("Compile(%q) = %#v, want NotAFunction", code, err)
		}
	}
	for _, code := range []string{
		"module.exports = function (req) {}",
		"module.exports = async function (req) {}",
		"module.exports = async (req) => {}",
		"module.exports = function* () {}",
		"exports.x = 1; module.exports = function () {}",
		"'use strict';\nconst helper = (x) => x * 2;\nmodule.exports = (req) => helper(req.n);",
		"module.exports = () => 1; return; module.exports = 2", // a module body may return, as in Node
	} {
		if _, err := r.Compile(code); err != nil {
			t.Errorf("Compile(%q) = %v", code, err)
		}
	}
}

func TestCompileModuleBodyFails(t *testing.T) {
	// Only the busy loop gets a short timeout: a busy machine must not make
	// the others time out.
	r := New(Options{})
	short := New(Options{Timeout: 100 * time.Millisecond})
	tests := []struct {
		r    *Runtime
		code string
		want string
	}{
		{r, "throw new Error('at load')", "loading the module threw: at load"},
		{r, "throw new BadRequestError('nope')", "loading the module threw: BadRequestError: nope"},
		{r, "require('fs'); module.exports = () => 1", "loading the module threw: module fs is not available; allowed: @svc/errors, buffer, crypto, url, util"},
		{short, "while (true) {}", "loading the module failed: the code did not finish within 100ms"},
	}
	for _, tc := range tests {
		_, err := tc.r.Compile(tc.code)
		var ce *CompileError
		if !errors.As(err, &ce) || ce.NotAFunction || ce.Line != 0 || ce.Message != tc.want {
			t.Errorf("Compile(%q) = %#v, want message %q", tc.code, err, tc.want)
		}
	}
	checkWorks(t, short)
}

func TestCompileTooBig(t *testing.T) {
	r := New(Options{MaxCodeBytes: 100})
	code := "module.exports = () => 1; //" + strings.Repeat("x", 100)
	_, err := r.Compile(code)
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Message != "the code is 128 bytes; the limit is 100 bytes" {
		t.Errorf("Compile(128 bytes) = %#v", err)
	}
	if _, err := r.Compile("module.exports = () => 1"); err != nil {
		t.Errorf("Compile(small) = %v", err)
	}
	if got := New(Options{}).opts.MaxCodeBytes; got != 256<<10 {
		t.Errorf("default MaxCodeBytes = %d, want 256 KiB", got)
	}
}

func TestCompileCache(t *testing.T) {
	r := New(Options{})
	code := "module.exports = () => 1"
	p1 := mustCompile(t, r, code)
	p2 := mustCompile(t, r, code)
	if p1 != p2 {
		t.Error("compiling the same code twice gave two programs")
	}
	sum := sha256.Sum256([]byte(code))
	if got, want := p1.Hash(), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Hash() = %q, want %q", got, want)
	}
	if p3 := mustCompile(t, r, code+" "); p3 == p1 || p3.Hash() == p1.Hash() {
		t.Error("different code shares a program")
	}

	// Refusals are cached too, and a caller changing the error it got
	// does not change the next one.
	_, err1 := r.Compile("module.exports = 1")
	err1.(*CompileError).Message = "changed"
	_, err2 := r.Compile("module.exports = 1")
	if err2.(*CompileError).Message != "module.exports is not a function" {
		t.Errorf("second Compile = %v", err2)
	}

	// The cache is bounded, least recently used out first.
	c := newProgramCache(2)
	k := func(i byte) [32]byte { return [32]byte{i} }
	c.put(k(1), &Program{hash: "1"}, nil)
	c.put(k(2), &Program{hash: "2"}, nil)
	c.get(k(1))
	c.put(k(3), &Program{hash: "3"}, nil)
	if _, _, ok := c.get(k(2)); ok {
		t.Error("the least recently used entry was kept")
	}
	for _, i := range []byte{1, 3} {
		if _, _, ok := c.get(k(i)); !ok {
			t.Errorf("entry %d was dropped", i)
		}
	}
	if c.len() != 2 {
		t.Errorf("len = %d, want 2", c.len())
	}
}

func TestCompiledProgramRunsOnAnotherRuntime(t *testing.T) {
	p := mustCompile(t, New(Options{}), "module.exports = (req) => req.x * 2")
	out, err := New(Options{}).Run(t.Context(), p, map[string]any{"x": 21}, Host{})
	if err != nil || out != 42.0 {
		t.Errorf("Run = %v, %v; want 42", out, err)
	}
	var nilProgram *Program
	if _, err := New(Options{}).Run(t.Context(), nilProgram, nil, Host{}); err == nil {
		t.Error("Run(nil program) = nil error")
	}
}
