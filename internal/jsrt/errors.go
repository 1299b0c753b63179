package jsrt

import (
	"fmt"
	"strconv"

	"github.com/dop251/goja"
)

// ErrorKind classifies an Error.
type ErrorKind int

const (
	// Thrown: the code threw (an error class or anything else).
	Thrown ErrorKind = iota
	// Timeout: the deadline passed or ctx ended; the run was interrupted.
	Timeout
	// MemoryLimit: the memory guard stopped the run.
	MemoryLimit
	// RuntimeFailure: anything else (a bad result, deep recursion).
	RuntimeFailure
)

// Error is a failure while running code. It never carries a Go stack trace
// or host detail.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status of the error class; 500 otherwise.
	Status int
	// Class is the error class thrown ("BadRequestError", "Error", ...),
	// empty for kinds other than Thrown.
	Class   string
	Message string
	Errors  map[string][]string
	// Headers and Body are set for CustomHttpResponseError only.
	Headers map[string]string
	Body    any
}

func (e *Error) Error() string {
	if e.Class != "" {
		return e.Class + ": " + e.Message
	}
	return e.Message
}

// errorClasses are the service's error classes and their statuses.
var errorClasses = map[string]int{
	"BadRequestError":           400,
	"AuthenticationError":       401,
	"InvalidPaymentMethodError": 402,
	"AuthorizationError":        403,
	"RateLimitError":            429,
	"ReactorRuntimeError":       500,
	"ServiceUnavailableError":   503,
}

// prelude defines the error classes in every runtime. ServiceError keeps
// the argument in data so the host can turn it into Errors.
var prelude = goja.MustCompile("prelude.js", `
class ServiceError extends Error {
	constructor(name, status, arg) {
		super(typeof arg === "string" ? arg : (arg === undefined ? name : ""));
		this.name = name;
		this.status = status;
		this.data = arg;
	}
}
`+classDefinitions()+`
class CustomHttpResponseError extends Error {
	constructor(res) {
		super("custom response");
		this.name = "CustomHttpResponseError";
		res = res || {};
		this.status = res.status;
		this.headers = res.headers;
		this.body = res.body;
	}
}
globalThis.CustomHttpResponseError = CustomHttpResponseError;
`, true)

func classDefinitions() string {
	out := ""
	for name, status := range errorClasses {
		out += fmt.Sprintf("class %s extends ServiceError { constructor(arg) { super(%q, %d, arg); } }\nglobalThis.%s = %s;\n",
			name, name, status, name, name)
	}
	return out
}

// maxMessage bounds a message taken from thrown values.
const maxMessage = 1000

func clip(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage] + "…"
	}
	return s
}

// thrown classifies a value the code threw (or rejected its promise with).
func (s *sandbox) thrown(v goja.Value) error {
	obj, ok := v.(*goja.Object)
	if !ok || obj == nil {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: "the code threw nothing"}
		}
		return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: clip(v.String())}
	}
	name := ""
	if n := obj.Get("name"); n != nil {
		name = n.String()
	}
	msg := ""
	if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
		msg = clip(m.String())
	}
	if name == "CustomHttpResponseError" && s.isInstance(obj, name) {
		e := &Error{Kind: Thrown, Class: name, Status: 500, Message: "custom response"}
		if st := obj.Get("status"); st != nil {
			if n, err := strconv.Atoi(st.String()); err == nil && n >= 100 && n <= 599 {
				e.Status = n
			}
		}
		e.Headers = map[string]string{}
		if h, ok := obj.Get("headers").(*goja.Object); ok {
			for _, k := range h.Keys() {
				e.Headers[k] = h.Get(k).String()
			}
		}
		body, err := s.fromJS(obj.Get("body"))
		if err == nil {
			e.Body = body
		}
		if e.Body == nil {
			e.Body = ""
		}
		return e
	}
	if status, ok := errorClasses[name]; ok && s.isInstance(obj, name) {
		e := &Error{Kind: Thrown, Class: name, Status: status, Message: msg}
		data, _ := s.fromJS(obj.Get("data"))
		switch d := data.(type) {
		case string:
			e.Errors = map[string][]string{"error": {d}}
		case []any:
			e.Errors = map[string][]string{"error": texts(d)}
		case map[string]any:
			e.Errors = map[string][]string{}
			for k, v := range d {
				if arr, ok := v.([]any); ok {
					e.Errors[k] = texts(arr)
				} else {
					e.Errors[k] = []string{text(v)}
				}
			}
			if e.Message == "" {
				e.Message = name
			}
		}
		return e
	}
	if msg == "" {
		msg = "the code threw a " + obj.ClassName()
	}
	return &Error{Kind: Thrown, Status: 500, Class: "Error", Message: msg}
}

// isInstance reports whether obj is an instance of the global class name.
func (s *sandbox) isInstance(obj *goja.Object, name string) bool {
	ctor, ok := s.vm.Get(name).(*goja.Object)
	if !ok {
		return false
	}
	return s.vm.InstanceOf(obj, ctor)
}

func texts(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = text(v)
	}
	return out
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return clip(s)
	}
	return clip(fmt.Sprint(v))
}
