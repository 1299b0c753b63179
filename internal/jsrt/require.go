package jsrt

import (
	"strings"

	"github.com/dop251/goja"
)

// modules is the require allow-list. "node:crypto" is accepted for
// "crypto".
var modules = map[string]func(s *session) goja.Value{
	"crypto":      (*session).cryptoModule,
	"@svc/errors": (*session).errorsModule,
}

const allowedModules = "@svc/errors, crypto"

// require loads an allow-listed module, once per invocation. Anything else
// throws an Error naming what is allowed.
func (s *session) require(call goja.FunctionCall) goja.Value {
	arg := call.Argument(0)
	if !goja.IsString(arg) {
		panic(s.vm.NewTypeError("The \"id\" argument must be of type string"))
	}
	name := strings.TrimPrefix(arg.String(), "node:")
	if m, ok := s.modules[name]; ok {
		return m
	}
	load, ok := modules[name]
	if !ok {
		panic(s.newError("module " + clipTo(arg.String(), 100) + " is not available; allowed: " + allowedModules))
	}
	if s.modules == nil {
		s.modules = map[string]goja.Value{}
	}
	m := load(s)
	s.modules[name] = m
	return m
}

// errorsModule is require('@svc/errors'): the error classes, also globals.
func (s *session) errorsModule() goja.Value {
	return s.errorClasses()
}

// newError is a new Error (the global one: code that replaced it gets what
// it asked for).
func (s *session) newError(msg string) *goja.Object {
	e, err := s.vm.New(s.vm.Get("Error"), s.vm.ToValue(msg))
	if err != nil {
		return s.vm.NewTypeError(msg)
	}
	return e
}
