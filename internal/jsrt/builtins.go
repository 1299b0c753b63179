package jsrt

import (
	"math"

	"github.com/dop251/goja"
)

// boundBuiltins wraps the built-ins that can allocate a lot in one call.
// goja cannot interrupt a built-in, and the memory guard only acts between
// instructions, so 'x'.repeat(2 ** 30) or new Array(2 ** 32 - 1).fill(0)
// would allocate gigabytes before anything could stop it. The wrappers
// throw a RangeError, as V8 does past its own limits, when the result
// would exceed the invocation's memory limit; otherwise they call the
// original, which the code cannot reach.
func (s *session) boundBuiltins() {
	maxString := float64(s.rt.maxStringLength())
	maxArray := float64(s.rt.maxArrayLength())
	tooLong := func() { panic(s.newRangeError("Invalid string length")) }
	str := s.vm.ToValue("").ToObject(s.vm).Prototype()
	arr := s.vm.NewArray().Prototype()

	repeat, _ := goja.AssertFunction(str.Get("repeat"))
	str.DefineDataProperty("repeat", s.fn("repeat", 1, func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
			panic(s.vm.NewTypeError("String.prototype.repeat called on null or undefined"))
		}
		this := call.This.ToString() // once: a toString may answer differently twice
		if n := call.Argument(0).ToFloat(); n*float64(stringLength(this)) > maxString {
			tooLong()
		}
		v, err := repeat(this, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	pad := func(call goja.FunctionCall) {
		if call.Argument(0).ToFloat() > maxString {
			tooLong()
		}
	}
	s.wrap(str, "padStart", pad)
	s.wrap(str, "padEnd", pad)
	arr.DefineDataProperty("join", s.join(int(maxString)), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	s.boundLengthWalkers(arr)
	s.forbidCodeFromStrings()
	s.boundReplace(str, maxString)
	s.wrap(arr, "fill", func(call goja.FunctionCall) {
		n := lengthOf(s.vm, call.This)
		from := relative(call.Argument(1), n, 0)
		to := relative(call.Argument(2), n, n)
		if to-from > maxArray {
			panic(s.newRangeError("Invalid array length"))
		}
	})
}

// wrap replaces proto[name] with a function that runs check and then the
// original.
func (s *session) wrap(proto *goja.Object, name string, check func(goja.FunctionCall)) {
	orig, ok := goja.AssertFunction(proto.Get(name))
	if !ok {
		return
	}
	length := int(proto.Get(name).ToObject(s.vm).Get("length").ToInteger())
	fn := s.fn(name, length, func(call goja.FunctionCall) goja.Value {
		check(call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err) // rethrow the original's exception (or interruption)
		}
		return v
	})
	proto.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// stringLength is the length of v as a string; a value that does not
// convert counts as empty, and the original then throws.
func stringLength(v goja.Value) int {
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	if _, ok := v.(*goja.Symbol); ok {
		return 0
	}
	if str, ok := v.ToString().(goja.String); ok {
		return str.Length()
	}
	return 0
}

// lengthOf is ToLength(this.length), 0 when this is not an object.
func lengthOf(vm *goja.Runtime, this goja.Value) float64 {
	obj, ok := this.(*goja.Object)
	if !ok {
		return 0
	}
	n := obj.Get("length")
	if n == nil {
		return 0
	}
	f := n.ToFloat()
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return math.Min(math.Trunc(f), 1<<53-1)
}

// relative resolves a relative index argument of fill against length n.
func relative(v goja.Value, n, def float64) float64 {
	if goja.IsUndefined(v) {
		return def
	}
	f := v.ToFloat()
	if math.IsNaN(f) {
		f = 0
	}
	f = math.Trunc(f)
	if f < 0 {
		return math.Max(n+f, 0)
	}
	return math.Min(f, n)
}

// queueMicrotask is queueMicrotask, as in Node.
func (s *session) queueMicrotask() goja.Value {
	return s.fn("queueMicrotask", 1, func(call goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(s.vm.NewTypeError("The \"callback\" argument must be of type function"))
		}
		p, resolve, _ := s.vm.NewPromise()
		then, _ := goja.AssertFunction(s.vm.ToValue(p).ToObject(s.vm).Get("then"))
		if then == nil {
			panic(s.vm.NewTypeError("Promise.prototype.then is not a function"))
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

func (s *session) newRangeError(msg string) *goja.Object {
	e, err := s.vm.New(s.vm.Get("RangeError"), s.vm.ToValue(msg))
	if err != nil {
		return s.newError(msg)
	}
	return e
}
