package jsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// sandbox is one goja runtime, set up for one run.
type sandbox struct {
	r      *Runtime
	vm     *goja.Runtime
	ctx    context.Context
	client Client

	// why is set by the watchdog before it interrupts the runtime.
	why chan ErrorKind
}

func (r *Runtime) newSandbox(client Client) *sandbox {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	s := &sandbox{r: r, vm: vm, ctx: context.Background(), client: client, why: make(chan ErrorKind, 1)}
	if _, err := vm.RunProgram(prelude); err != nil {
		panic("jsrt: prelude: " + err.Error()) // the prelude is constant and tested
	}
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		console.Set(level, func(call goja.FunctionCall) goja.Value {
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				parts[i] = a.String()
			}
			r.opts.Logger.Debug("jsrt: console", "source", level, "message", strings.Join(parts, " "))
			return goja.Undefined()
		})
	}
	vm.Set("console", console)
	return s
}

// load runs the module body and returns its exported function.
func (s *sandbox) load(p *Program) (goja.Callable, error) {
	wrapper, err := s.vm.RunProgram(p.prog)
	if err != nil {
		return nil, s.failure(err)
	}
	call, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the module did not load"}
	}
	module := s.vm.NewObject()
	exports := s.vm.NewObject()
	module.Set("exports", exports)
	if _, err := call(goja.Undefined(), module, exports, s.vm.ToValue(s.require)); err != nil {
		return nil, s.failure(err)
	}
	fn, ok := goja.AssertFunction(module.Get("exports"))
	if !ok {
		return nil, &CompileError{NotAFunction: true, Message: "module.exports is not a function"}
	}
	return fn, nil
}

// watch interrupts the runtime when ctx ends or the heap grows too much;
// the returned function stops watching.
func (s *sandbox) watch(ctx context.Context, maxGrowth uint64) func() {
	done := make(chan struct{})
	start := heapBytes()
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				s.stop(Timeout)
				return
			case <-tick.C:
				if h := heapBytes(); h > start && h-start > maxGrowth {
					s.stop(MemoryLimit)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

func (s *sandbox) stop(kind ErrorKind) {
	select {
	case s.why <- kind:
	default:
	}
	s.vm.Interrupt(kind)
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapBytes is the bytes of live and not yet swept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{heapSample[0]}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// failure classifies an error from goja.
func (s *sandbox) failure(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if kind, ok := ie.Value().(ErrorKind); ok && kind == MemoryLimit {
			return &Error{Kind: MemoryLimit, Status: 500, Message: "the code used too much memory"}
		}
		return &Error{Kind: Timeout, Status: 500, Message: "the code did not finish in time"}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &Error{Kind: RuntimeFailure, Status: 500, Message: "the code recursed too deeply"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return s.thrown(ex.Value())
	}
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	var ce *CompileError
	if errors.As(err, &ce) {
		return ce
	}
	return &Error{Kind: RuntimeFailure, Status: 500, Message: "the code failed"}
}

// toJS converts plain JSON values to a fresh JS value (through JSON, so
// the code gets ordinary objects, never views of Go maps).
func (s *sandbox) toJS(v any) (goja.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the input is not JSON"}
	}
	parse, _ := goja.AssertFunction(s.vm.Get("JSON").ToObject(s.vm).Get("parse"))
	out, err := parse(goja.Undefined(), s.vm.ToValue(string(b)))
	if err != nil {
		return nil, s.failure(err)
	}
	return out, nil
}

// fromJS converts a JS value to plain JSON values; undefined is nil.
func (s *sandbox) fromJS(v goja.Value) (any, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	stringify, _ := goja.AssertFunction(s.vm.Get("JSON").ToObject(s.vm).Get("stringify"))
	out, err := stringify(goja.Undefined(), v)
	if err != nil {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the result is not JSON (a cycle or a BigInt?)"}
	}
	if goja.IsUndefined(out) {
		return nil, nil // a function or symbol
	}
	res, err := decodeJSON(out.String())
	if err != nil {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the result is not JSON"}
	}
	return res, nil
}

// throwGo throws err into the code as an Error with err's message.
func (s *sandbox) throwGo(err error) {
	panic(s.vm.NewGoError(err))
}

// arg converts a JS argument for the client.
func (s *sandbox) arg(v goja.Value) any {
	out, err := s.fromJS(v)
	if err != nil {
		s.throwGo(err)
	}
	return out
}

func (s *sandbox) result(v any, err error) goja.Value {
	if err != nil {
		s.throwGo(err)
	}
	out, err := s.toJS(v)
	if err != nil {
		s.throwGo(err)
	}
	return out
}

// clientObject is req.client.
func (s *sandbox) clientObject() *goja.Object {
	c := s.vm.NewObject()
	c.Set("tokenize", func(call goja.FunctionCall) goja.Value {
		return s.result(s.client.Tokenize(s.ctx, s.arg(call.Argument(0))))
	})
	c.Set("detokenize", func(call goja.FunctionCall) goja.Value {
		return s.result(s.client.Detokenize(s.ctx, s.arg(call.Argument(0))))
	})
	c.Set("getToken", func(call goja.FunctionCall) goja.Value {
		return s.result(s.client.GetToken(s.ctx, call.Argument(0).String()))
	})
	c.Set("deleteToken", func(call goja.FunctionCall) goja.Value {
		if err := s.client.DeleteToken(s.ctx, call.Argument(0).String()); err != nil {
			s.throwGo(err)
		}
		return goja.Undefined()
	})
	return c
}

// require loads an allow-listed module.
func (s *sandbox) require(name string) goja.Value {
	switch name {
	case "crypto":
		return s.cryptoModule()
	}
	panic(s.vm.NewGoError(fmt.Errorf("module %q is not available; allowed: crypto", name)))
}
