package jsrt

import (
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/url"
	"github.com/dop251/goja_nodejs/util"
)

// modules is the require allow-list. A "node:" prefix is accepted for
// every name ("node:crypto" is "crypto").
var modules = map[string]func(s *session) goja.Value{
	"buffer":      func(s *session) goja.Value { return s.nodeModule(buffer.Require) },
	"crypto":      (*session).cryptoModule,
	"url":         func(s *session) goja.Value { return s.nodeModule(url.Require) },
	"util":        func(s *session) goja.Value { return s.nodeModule(util.Require) },
	"@svc/errors": (*session).errorsModule,
}

const allowedModules = "@svc/errors, buffer, crypto, url, util"

// require loads an allow-listed module, once per invocation. Anything else
// throws an Error naming what is allowed.
func (s *session) require(call goja.FunctionCall) goja.Value {
	arg := call.Argument(0)
	if !goja.IsString(arg) {
		panic(s.hostTypeError("The \"id\" argument must be of type string"))
	}
	m := s.module(strings.TrimPrefix(arg.String(), "node:"))
	if m == nil {
		panic(s.newError("module " + clipTo(arg.String(), 100) + " is not available; allowed: " + allowedModules))
	}
	return m
}

// module is the allow-listed module name, loaded on first use; nil when
// name is not allowed. The globals that modules also export (Buffer, URL,
// URLSearchParams, the error classes) come from here, so that
// require('buffer').Buffer === Buffer.
func (s *session) module(name string) goja.Value {
	if m, ok := s.modules[name]; ok {
		return m
	}
	load, ok := modules[name]
	if !ok {
		return nil
	}
	if s.modules == nil {
		s.modules = map[string]goja.Value{}
	}
	m := load(s)
	s.modules[name] = m
	return m
}

// moduleExport is module(name)[key], for the globals that modules export.
func (s *session) moduleExport(name, key string) goja.Value {
	return s.module(name).ToObject(s.vm).Get(key)
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
		return s.hostTypeError(msg)
	}
	return e
}
