package reactors

import (
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/jsrt"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// compileRefusal explains the outcome of checking code on field.
func compileRefusal(err error, field string) error {
	var ce *jsrt.CompileError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.NotAFunction:
		e := unit.InvalidField(field, "module.exports must be a function")
		e.Kind, e.Message = unit.Unprocessable, "the code does not export a function"
		return e
	case errors.As(err, &ce) && ce.Line > 0:
		return unit.InvalidField(field, "line %d, column %d: %s", ce.Line, ce.Column, ce.Message)
	case errors.As(err, &ce):
		return unit.InvalidField(field, "%s", ce.Message)
	}
	return sandboxError(err)
}

// sandboxError translates a failure of the sandbox itself.
func sandboxError(err error) error {
	switch {
	case errors.Is(err, sandbox.ErrBusy):
		return unit.Errorf(unit.Unavailable, "no code worker was free in time: too many invocations of this tenant, or of all tenants, are in progress; retry later")
	case errors.Is(err, sandbox.ErrClosed):
		return unit.Errorf(unit.Unavailable, "the vault is closing")
	}
	return unit.AsInternal(err)
}

// codeError translates a failure of tenant code into an *unit.Error. It carries
// the code's own message and never a host detail.
func codeError(err error) error {
	var tl *sandbox.TooLargeError
	if errors.As(err, &tl) {
		return resultTooLarge("the code's result", tl.Limit)
	}
	if reason := sandbox.ReasonOf(err); reason != 0 {
		e := &unit.Error{Kind: unit.CodeFailed, Status: 500}
		switch reason {
		case sandbox.StoppedTime:
			e.Stop, e.Message = unit.CodeTimedOut, "the code did not finish in time"
		case sandbox.StoppedMemory:
			e.Stop, e.Message = unit.CodeOutOfMemory, "the code used too much memory"
		default:
			e.Stop, e.Message = unit.CodeCrashed, "the code crashed"
			var se *sandbox.StopError
			if errors.As(err, &se) {
				e.Message = se.Message
			}
		}
		return e
	}
	var je *jsrt.Error
	if !errors.As(err, &je) {
		if e, ok := err.(*unit.Error); ok {
			return e
		}
		return sandboxError(err)
	}
	e := &unit.Error{Kind: unit.CodeFailed, Status: je.Status, Message: je.Message, Fields: je.Errors, Headers: je.Headers, Body: je.Body}
	if len(e.Headers) > 0 {
		// The response the code built is framed by the vault: its
		// Content-Length and hop-by-hop headers are left out, and a
		// header that cannot be sent fails the code (CodeHeaders).
		h := make(map[string]any, len(e.Headers))
		for k, v := range e.Headers {
			h[k] = v
		}
		sendable, err := CodeHeaders(h)
		if err != nil {
			return err
		}
		e.Headers = make(map[string]string, len(sendable))
		for k := range sendable {
			e.Headers[k] = sendable.Get(k)
		}
	}
	switch je.Kind {
	case jsrt.RuntimeFailure:
		e.Status = 500
		if e.Message == "" {
			e.Message = "the code failed"
		}
	default:
		if e.Status == 0 {
			e.Status = 500
		}
		if je.Class != "" && je.Class != "CustomHttpResponseError" {
			e.Message = fmt.Sprintf("%s: %s", je.Class, je.Message)
		}
	}
	return e
}
