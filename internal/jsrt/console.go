package jsrt

import (
	"bytes"
	"log/slog"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/util"
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
//
// goja_nodejs's console module is not used: it sends info and debug to
// the same Printer method as log, and has no trace, so the source
// attribute could not name the method. Its util.format does the
// formatting.
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
	l.LogAttrs(s.parent, slog.LevelDebug, clipTo(s.format(args), maxLogLineBytes), source)
}

// format renders console arguments as Node does. When the first is a
// string with specifiers for the arguments that follow, it is a format for
// util.format (goja_nodejs's: %s, %d, %j and %%), which takes the
// arguments its specifiers use; otherwise it is used as it is (that
// util.format would drop a trailing %, as in "100%"). The rest follow,
// separated by spaces, each rendered by logText. Building stops once the
// line is longer than a line may be.
func (s *session) format(args []goja.Value) string {
	var b strings.Builder
	rest := args
	if len(args) > 0 && goja.IsString(args[0]) {
		f := args[0].String()
		n := formatArgs(f, len(args)-1)
		var out bytes.Buffer
		if n == 0 || s.guard(func() { util.New(s.vm).Format(&out, f, args[1:1+n]...) }) != nil {
			// No specifiers, or the code's toString or toJSON threw:
			// no substitution.
			out.Reset()
			out.WriteString(f)
			n = 0
		}
		b.Write(out.Bytes())
		rest = args[1+n:]
	}
	for i, a := range rest {
		if b.Len() > maxLogLineBytes {
			break
		}
		if i > 0 || len(rest) < len(args) {
			b.WriteByte(' ')
		}
		b.WriteString(s.logText(a))
	}
	return b.String()
}

// formatArgs is how many of n arguments util.format uses for the
// specifiers in f: one for each %s, %d and %j while arguments last.
func formatArgs(f string, n int) int {
	used := 0
	for i := 0; i+1 < len(f) && used < n; i++ {
		if f[i] != '%' {
			continue
		}
		switch f[i+1] {
		case 's', 'd', 'j':
			used++
		}
		i++ // past the specifier, or the second % of %%
	}
	return used
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
