package jsrt

import (
	"github.com/dop251/goja"
)

// queueMicrotask is queueMicrotask, as in Node.
func (s *session) queueMicrotask() goja.Value {
	return s.fn("queueMicrotask", 1, func(call goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(s.hostTypeError("The \"callback\" argument must be of type function"))
		}
		p, resolve, _ := s.vm.NewPromise()
		then, _ := goja.AssertFunction(s.vm.ToValue(p).ToObject(s.vm).Get("then"))
		if then == nil {
			panic(s.hostTypeError("Promise.prototype.then is not a function"))
		}
		run := s.fn("", 0, func(goja.FunctionCall) goja.Value {
			v, err := cb(goja.Undefined())
			if err != nil {
				panic(err)
			}
			return v
		})
		if _, err := then(s.vm.ToValue(p), run); err != nil {
			panic(err)
		}
		resolve(nil)
		return goja.Undefined()
	})
}
