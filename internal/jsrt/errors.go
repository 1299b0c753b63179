package jsrt

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// ErrorKind classifies an Error.
type ErrorKind int

const (
	Thrown         ErrorKind = iota // code threw (an error class or anything else)
	Timeout                         // deadline or ctx cancellation; runtime interrupted
	MemoryLimit                     // the worker process ran out of memory (reported by the sandbox, never by jsrt)
	RuntimeFailure                  // anything else: bad result, stack overflow, host failure
)

func (k ErrorKind) String() string {
	switch k {
	case Thrown:
		return "thrown"
	case Timeout:
		return "timeout"
	case MemoryLimit:
		return "memory limit"
	case RuntimeFailure:
		return "runtime failure"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a failure while running code. It never carries a Go stack trace
// or host detail: Message is the code's own message (for Thrown) or one
// written here.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status: the error class's for Thrown (verbatim
	// for CustomHttpResponseError), 500 for plain errors and other kinds.
	Status int
	// Class is the error class thrown ("BadRequestError", ...), "Error" for
	// anything else thrown, "" for kinds other than Thrown.
	Class string
	// Message is the error's message.
	Message string
	// Errors holds the error class's argument: a string or an array becomes
	// {"error": [...]}, an object one array per property.
	Errors map[string][]string
	// Headers and Body are set for CustomHttpResponseError only.
	Headers map[string]string
	Body    any
}

func (e *Error) Error() string {
	if e.Kind == Thrown {
		return fmt.Sprintf("jsrt: %s (%d): %s", e.Class, e.Status, e.Message)
	}
	return fmt.Sprintf("jsrt: %s: %s", e.Kind, e.Message)
}

// errorClasses are the statuses of the service's error classes, defined in
// prelude.js. The status comes from here, not from the thrown object.
var errorClasses = map[string]int{
	"AuthenticationError":       401,
	"AuthorizationError":        403,
	"BadRequestError":           400,
	"InvalidPaymentMethodError": 402,
	"RateLimitError":            429,
	"ReactorRuntimeError":       500,
	"ServiceUnavailableError":   503,
	"CustomHttpResponseError":   500, // its own status is used when valid
}

// Bounds on what a thrown value contributes to an Error.
const (
	maxMessageBytes = 2048 // a message
	maxErrorKeys    = 100  // properties of an Errors object
	maxErrorItems   = 100  // messages per property
	maxRenderBytes  = 200  // a non-string value rendered as text
)

// failure classifies an error returned by goja.
func (s *session) failure(err error) error {
	// goja's own error types first, by type: errors.As would call
	// Exception.Unwrap, which runs instanceof on the thrown value and so
	// the code's proxy traps, outside any guard.
	switch e := err.(type) {
	case *goja.Exception:
		return s.thrown(e.Value())
	case *goja.InterruptedError, *goja.StackOverflowError:
	default:
		// Stops at the Exception without calling its Unwrap.
		if ex, ok := errors.AsType[*goja.Exception](err); ok {
			return s.thrown(ex.Value())
		}
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if e, ok := ie.Value().(*Error); ok {
			return e
		}
		return &Error{Kind: RuntimeFailure, Status: 500, Message: "the code was interrupted"}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &Error{Kind: RuntimeFailure, Status: 500, Message: "Maximum call stack size exceeded"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return s.thrown(ex.Value())
	}
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	s.hostFailure("unexpected error", err.Error())
	return &Error{Kind: RuntimeFailure, Status: 500, Message: "the JavaScript runtime failed"}
}

// thrown turns a value the code threw, or rejected its promise with, into
// an Error. Reading it may run the code's getters or proxy traps, so it is
// guarded like any other call into the code.
func (s *session) thrown(v goja.Value) (out error) {
	err := s.guard(func() { out = s.classify(v) })
	if err != nil {
		if je, ok := err.(*Error); ok && je.Kind != Thrown {
			return je
		}
		return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: "the code threw a value that cannot be read"}
	}
	return out
}

func (s *session) classify(v goja.Value) *Error {
	obj, ok := v.(*goja.Object)
	if !ok {
		return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: clip(primitiveText(v))}
	}
	if b, ok := s.brands[obj]; ok {
		return s.classError(obj, b.class, errorClasses[b.class], b.arg)
	}
	if obj.ClassName() == "Error" {
		msg := stringProp(obj, "message")
		name := stringProp(obj, "name")
		if engineErrors[name] && !s.hostErrors[obj] {
			msg = withheldMessage
		}
		if name != "" && name != "Error" {
			if msg == "" {
				msg = name
			} else {
				msg = name + ": " + msg
			}
		}
		if msg == "" {
			msg = "Error"
		}
		return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: clip(msg)}
	}
	if msg := stringProp(obj, "message"); msg != "" {
		return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: clip(msg)}
	}
	return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: s.render(obj)}
}

// engineErrors are the JavaScript engine's error classes. Their messages
// quote the values the code worked on ("Cannot read property '4111111111111111'
// of undefined"), which may be detokenized data the caller of a reactor or
// proxy may not read: they are withheld, unless the host threw the error
// (hostTypeError), whose messages it wrote itself. The code that wants a
// message of its own catches the error, or throws an Error or an error class.
var engineErrors = map[string]bool{"TypeError": true, "ReferenceError": true, "RangeError": true,
	"SyntaxError": true, "URIError": true, "EvalError": true, "AggregateError": true}

// withheldMessage stands for an engine error's message.
const withheldMessage = "its message is not shown, since the engine's messages quote the values the code worked on"

// hostTypeError is a TypeError the host throws, with a message it wrote
// (and so shown to the caller).
func (s *session) hostTypeError(msg string) *goja.Object {
	return s.markHostError(s.vm.NewTypeError(msg))
}

// markHostError records e as an error the host made, whose message is
// shown; the JavaScript shims (fetch.js, encoding.js) mark theirs through
// hostErrorFunc.
func (s *session) markHostError(e *goja.Object) *goja.Object {
	if s.hostErrors == nil {
		s.hostErrors = map[*goja.Object]bool{}
	}
	s.hostErrors[e] = true
	return e
}

// hostErrorFunc is hostError(e) for the shims: it marks e and returns it.
func (s *session) hostErrorFunc() goja.Value {
	return s.fn("hostError", 1, func(call goja.FunctionCall) goja.Value {
		return s.markHostError(call.Argument(0).ToObject(s.vm))
	})
}

// classError builds the Error for an instance of one of the error classes.
func (s *session) classError(obj *goja.Object, name string, status int, arg goja.Value) *Error {
	e := &Error{Kind: Thrown, Status: status, Class: name, Message: clip(stringProp(obj, "message"))}
	if e.Message == "" {
		e.Message = name
	}
	if name != "CustomHttpResponseError" {
		e.Errors = s.fieldErrors(arg)
		return e
	}
	r, _ := arg.(*goja.Object)
	if r == nil {
		return e
	}
	if st := r.Get("status"); st != nil && goja.IsNumber(st) {
		if f := st.ToFloat(); f == math.Trunc(f) && f >= 100 && f <= 599 {
			e.Status = int(f)
		}
	}
	if h, ok := r.Get("headers").(*goja.Object); ok {
		e.Headers = map[string]string{}
		for _, k := range h.Keys() {
			v := h.Get(k)
			if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
				continue
			}
			if a, ok := v.(*goja.Object); ok && a.ClassName() == "Array" {
				e.Headers[k] = strings.Join(s.texts(a), ", ")
				continue
			}
			e.Headers[k] = s.text(v)
		}
	}
	body, err := s.export(r.Get("body"), "CustomHttpResponseError body")
	var je *Error
	switch {
	case errors.As(err, &je):
		return je
	case err != nil && errors.As(err, new(*goja.Exception)):
		return &Error{Kind: RuntimeFailure, Status: 500, Message: "reading the CustomHttpResponseError body threw"}
	case err != nil:
		return &Error{Kind: RuntimeFailure, Status: 500, Message: err.Error()}
	}
	e.Body = body
	return e
}

// fieldErrors normalizes an error class's argument: a string or an array
// becomes {"error": [...]}, an object one array per property.
func (s *session) fieldErrors(arg goja.Value) map[string][]string {
	if arg == nil || goja.IsUndefined(arg) || goja.IsNull(arg) {
		return nil
	}
	obj, ok := arg.(*goja.Object)
	if !ok {
		return map[string][]string{"error": {s.text(arg)}}
	}
	if obj.ClassName() == "Array" {
		return map[string][]string{"error": s.texts(obj)}
	}
	out := map[string][]string{}
	keys := obj.Keys()
	sort.Strings(keys)
	for _, k := range keys[:min(len(keys), maxErrorKeys)] {
		v := obj.Get(k)
		if a, ok := v.(*goja.Object); ok && a.ClassName() == "Array" {
			out[k] = s.texts(a)
		} else {
			out[k] = []string{s.text(v)}
		}
	}
	return out
}

// texts renders the items of a JS array.
func (s *session) texts(a *goja.Object) []string {
	n := int(min(max(a.Get("length").ToInteger(), 0), maxErrorItems))
	out := make([]string, n)
	for i := range n {
		out[i] = s.text(a.Get(fmt.Sprint(i)))
	}
	return out
}

// text renders a value as a message: strings as they are, anything else
// as short JSON.
func (s *session) text(v goja.Value) string {
	if _, ok := v.(*goja.Object); ok {
		return s.render(v)
	}
	return clip(primitiveText(v))
}

// render is a short, safe rendering of any value: its JSON when it has
// one, else a description of its type.
func (s *session) render(v goja.Value) string { return s.renderTo(v, maxRenderBytes) }

func (s *session) renderTo(v goja.Value, n int) string {
	if out, err := s.export(v, "value"); err == nil {
		if b, err := marshalJSON(out); err == nil {
			return clipTo(string(b), n)
		}
	}
	if obj, ok := v.(*goja.Object); ok {
		return "[object " + obj.ClassName() + "]"
	}
	return clipTo(primitiveText(v), n)
}

func primitiveText(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if sym, ok := v.(*goja.Symbol); ok {
		return "Symbol(" + sym.String() + ")"
	}
	return v.String()
}

// stringProp is obj[name] when it is a string, else "".
func stringProp(obj *goja.Object, name string) string {
	v := obj.Get(name)
	if v == nil || !goja.IsString(v) {
		return ""
	}
	return v.String()
}

func clip(s string) string { return clipTo(s, maxMessageBytes) }

// clipTo cuts s to at most n bytes, on a rune boundary, and makes it valid
// UTF-8.
func clipTo(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
