package jsrt

import (
	"log/slog"
	"strings"

	"github.com/dop251/goja"
)

// Bounds on console output per invocation.
const (
	maxLogLines     = 1000
	maxLogLineBytes = 8 << 10
)

// console is console.log, info, warn, error, debug and trace. Output goes
// to Options.Logger at debug level with the attribute
// source=console.<method>; never to the caller. Each line is cut to 8 KiB,
// and at most 1000 lines are kept per invocation.
func (s *session) console() goja.Value {
	console := s.vm.NewObject()
	for _, method := range []string{"log", "info", "warn", "error", "debug", "trace"} {
		source := slog.String("source", "console."+method)
		console.Set(method, s.fn(method, 0, func(call goja.FunctionCall) goja.Value {
			s.log(source, call.Arguments)
			return goja.Undefined()
		}))
	}
	return console
}

func (s *session) log(source slog.Attr, args []goja.Value) {
	l := s.rt.opts.Logger
	if l == nil || !l.Enabled(s.parent, slog.LevelDebug) {
		return
	}
	s.logLines++
	switch {
	case s.logLines == maxLogLines+1:
		l.LogAttrs(s.parent, slog.LevelDebug, "(console output truncated)", source)
		return
	case s.logLines > maxLogLines:
		return
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.logText(a))
		if b.Len() > maxLogLineBytes {
			break
		}
	}
	l.LogAttrs(s.parent, slog.LevelDebug, clipTo(b.String(), maxLogLineBytes), source)
}

// logText renders one console argument: strings as they are, errors as
// "Name: message", other objects as JSON when they have one.
func (s *session) logText(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		return primitiveText(v)
	}
	var out string
	err := s.guard(func() {
		switch obj.ClassName() {
		case "Error":
			out = obj.String()
		case "Function":
			out = "[Function]"
		default:
			out = s.renderTo(obj, maxLogLineBytes)
		}
	})
	if err != nil {
		return "[object " + obj.ClassName() + "]"
	}
	return out
}
