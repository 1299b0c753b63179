package jsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// A session is one invocation: a fresh goja runtime with the sandbox
// installed, used once and dropped. goja cannot reset a runtime, and
// goja.New is cheap (its built-ins are created lazily), so runtimes are never
// reused: that is what makes isolation between invocations and tenants
// certain. What is shared is immutable: compiled programs.
type session struct {
	rt       *Runtime
	vm       *goja.Runtime
	parent   context.Context
	ctx      context.Context // ends at the deadline, on stop, or when Run returns
	cancel   context.CancelFunc
	started  time.Time
	deadline time.Time

	stopOnce sync.Once
	stopped  chan struct{} // closed by stop
	stopErr  *Error        // set by stop before stopped is closed

	// Set up by install and used only on the worker goroutine.
	classes    *goja.Object           // the error classes, once built
	brands     map[*goja.Object]brand // instances of the error classes
	hostErrors map[*goja.Object]bool  // TypeErrors the host threw, whose messages are its own
	modules    map[string]goja.Value
	textCodecs *goja.Object // TextEncoder and TextDecoder, once built
	fetchAPI   *goja.Object // fetch and Headers, once built
	// ownKeys is Reflect.ownKeys as it was before the code ran: the
	// exporter's way to an object's keys as JavaScript strings (convert.go).
	ownKeys  goja.Callable
	host     Host // what the code can reach outside; set by Run
	timers   timerQueue
	timerSeq int64
	logLines int
}

// newSession starts a session at started (when its budget began, so that
// messages name the budget exactly) ending at deadline.
func newSession(r *Runtime, parent context.Context, started, deadline time.Time) *session {
	ctx, cancel := context.WithDeadline(parent, deadline)
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStackSize)
	// Source maps would make the parser read the file a sourceMappingURL
	// comment names, from eval and new Function too.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	return &session{
		rt:       r,
		vm:       vm,
		parent:   parent,
		ctx:      ctx,
		cancel:   cancel,
		started:  started,
		deadline: deadline,
		stopped:  make(chan struct{}),
	}
}

// stop ends the session for a limit: it interrupts the JavaScript, cancels
// the context given to the client, and wakes anything waiting. Safe to call
// from any goroutine, any number of times; the first reason wins.
func (s *session) stop(kind ErrorKind, msg string) {
	s.stopOnce.Do(func() {
		s.stopErr = &Error{Kind: kind, Status: 500, Message: msg}
		s.vm.Interrupt(s.stopErr)
		s.cancel()
		close(s.stopped)
	})
}

// work runs fn on the worker goroutine and reports on done. A panic that is
// not a JavaScript exception is a bug in the host or in goja: it must not
// take the process down, and its detail stays in the log.
func (s *session) work(fn func(*session) (any, error), done chan<- outcome) {
	defer func() {
		if rec := recover(); rec != nil {
			s.hostFailure("panic", fmt.Sprint(rec)+string(debug.Stack()))
			done <- outcome{err: &Error{Kind: RuntimeFailure, Status: 500, Message: "the JavaScript runtime failed"}}
		}
	}()
	if err := s.install(); err != nil {
		done <- outcome{err: err}
		return
	}
	v, err := fn(s)
	done <- outcome{val: v, err: err}
}

// hostFailure logs a failure that is not the code's fault.
func (s *session) hostFailure(what, detail string) {
	if l := s.rt.opts.Logger; l != nil {
		l.LogAttrs(s.parent, slog.LevelError, "jsrt: "+what, slog.String("source", "jsrt"), slog.String("detail", detail))
	}
}

// install sets up the sandbox: the lazily created globals (console,
// timers, queueMicrotask, atob, btoa, the error classes), no code from
// strings, and the JSON.parse depth bound.
func (s *session) install() error {
	err := s.guard(func() {
		if r, ok := s.vm.Get("Reflect").(*goja.Object); ok {
			s.ownKeys, _ = goja.AssertFunction(r.Get("ownKeys"))
		}
		s.installGlobals()
		s.forbidCodeFromStrings()
	})
	if err != nil {
		return s.failure(err)
	}
	return nil
}

// loadModule runs the module body and returns module.exports, which must
// be a function.
func (s *session) loadModule(p *Program) (goja.Callable, error) {
	wrapper, err := s.vm.RunProgram(p.prog)
	if err != nil {
		return nil, s.failure(err)
	}
	body, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the module did not load"}
	}
	module := s.vm.NewObject()
	exports := s.vm.NewObject()
	module.Set("exports", exports)
	module.Set("id", ".")
	require := s.fn("require", 1, s.require)
	if _, err := body(goja.Undefined(), exports, require, module); err != nil {
		return nil, s.failure(err)
	}
	if fn, ok := goja.AssertFunction(module.Get("exports")); ok {
		return fn, nil
	}
	return nil, errNotAFunction
}

// errNotAFunction is what loadModule returns when module.exports is not a
// function; Compile turns it into a CompileError.
var errNotAFunction = &Error{Kind: RuntimeFailure, Status: 500, Message: "module.exports is not a function"}

// call calls fn with arg, waits for the promise it may return, and exports
// the result.
func (s *session) call(fn goja.Callable, arg goja.Value) (any, error) {
	ret, err := fn(goja.Undefined(), arg)
	if err != nil {
		return nil, s.failure(err)
	}
	if obj, ok := ret.(*goja.Object); ok && obj.ExportType() == promiseType {
		if p, ok := obj.Export().(*goja.Promise); ok {
			if ret, err = s.await(p); err != nil {
				return nil, err
			}
		}
	}
	return s.exportResult(ret)
}

// promiseType is what a goja promise exports as: checking it, unlike
// Export, runs none of the code's getters.
var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// guard runs f, which reads JavaScript values from Go and so may run the
// code's getters, proxy traps or toJSON methods. A JavaScript exception is
// returned as a *goja.Exception; an interruption (a limit) as its *Error.
func (s *session) guard(f func()) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			e, ok := rec.(error)
			var ie *goja.InterruptedError
			var so *goja.StackOverflowError
			if ok && (errors.As(e, &ie) || errors.As(e, &so)) {
				err = s.failure(e)
				return
			}
			panic(rec)
		}
	}()
	if ex := s.vm.Try(f); ex != nil {
		return ex
	}
	return nil
}

// fn makes a native function named name. goja would name it after the Go
// function, a host detail visible in String(fn) and in stack traces.
func (s *session) fn(name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	o := s.vm.ToValue(f).(*goja.Object)
	o.DefineDataProperty("name", s.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	if length > 0 {
		o.DefineDataProperty("length", s.vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	return o
}
