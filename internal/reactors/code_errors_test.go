package reactors

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/jsrt"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestCompileRefusal(t *testing.T) {
	if err := compileRefusal(nil, "code"); err != nil {
		t.Errorf("compileRefusal(nil) = %v, want nil", err)
	}
	tests := []struct {
		err   error
		kind  unit.Kind
		field string
	}{
		{&jsrt.CompileError{NotAFunction: true}, unit.Unprocessable, "module.exports must be a function"},
		{&jsrt.CompileError{Line: 3, Column: 7, Message: "Unexpected token"}, unit.Invalid, "line 3, column 7: Unexpected token"},
		{fmt.Errorf("wrapped: %w", &jsrt.CompileError{Message: "the module threw"}), unit.Invalid, "the module threw"},
		{sandbox.ErrBusy, unit.Unavailable, ""},
	}
	for _, tt := range tests {
		e, ok := compileRefusal(tt.err, "code").(*unit.Error)
		if !ok || e.Kind != tt.kind {
			t.Errorf("compileRefusal(%v) = %v, want kind %v", tt.err, e, tt.kind)
			continue
		}
		if tt.field != "" && (len(e.Fields["code"]) != 1 || e.Fields["code"][0] != tt.field) {
			t.Errorf("compileRefusal(%v) fields = %v, want code: %q", tt.err, e.Fields, tt.field)
		}
	}
}

func TestCodeError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want *unit.Error
	}{
		{"a thrown class", &jsrt.Error{Kind: jsrt.Thrown, Status: 400, Class: "BadRequestError", Message: "no", Errors: map[string][]string{"a": {"b"}}},
			&unit.Error{Kind: unit.CodeFailed, Status: 400, Message: "BadRequestError: no", Fields: map[string][]string{"a": {"b"}}}},
		{"a custom response keeps its message, loses framing headers", &jsrt.Error{Kind: jsrt.Thrown, Status: 418, Class: "CustomHttpResponseError", Message: "tea", Headers: map[string]string{"X-A": "1", "Content-Length": "5"}},
			&unit.Error{Kind: unit.CodeFailed, Status: 418, Message: "tea", Headers: map[string]string{"X-A": "1"}}},
		{"a runtime failure is a 500", &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 200},
			&unit.Error{Kind: unit.CodeFailed, Status: 500, Message: "the code failed"}},
		{"a closed sandbox", sandbox.ErrClosed, &unit.Error{Kind: unit.Unavailable, Message: "the vault is closing"}},
		{"a result too large", &sandbox.TooLargeError{Limit: 1 << 20},
			&unit.Error{Kind: unit.TooLarge, Message: "the code's result is larger than " + sandbox.FormatBytes(1<<20) + ", the most this vault accepts from code (code-max-result-bytes)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *unit.Error
			if !errors.As(codeError(tt.err), &got) {
				t.Fatalf("codeError(%v) = %v, not a *unit.Error", tt.err, codeError(tt.err))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("codeError(%v) (-want +got):\n%s", tt.err, diff)
			}
		})
	}
	var bad *unit.Error
	if !errors.As(codeError(&jsrt.Error{Kind: jsrt.Thrown, Class: "CustomHttpResponseError", Headers: map[string]string{"X-Bad": "a\nb"}}), &bad) || bad.Kind != unit.CodeFailed || bad.Fields["headers.X-Bad"] == nil {
		t.Errorf("codeError(a header that cannot be sent) = %v, want CodeFailed naming it", bad)
	}
}
