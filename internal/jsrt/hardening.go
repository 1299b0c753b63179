package jsrt

import (
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/tokenvault/tokenvault/internal/jsondepth"
)

// No code from strings at run time. eval and the Function constructors
// would parse text the code builds, outside Compile's checks, on the
// worker goroutine where nothing can interrupt the parser: goja's parser
// recurses without a bound, and eval("[".repeat(3e6)) exhausts Go's stack,
// a fatal error no recover catches, taking every tenant down with it.
// Reactors and transforms are compiled when saved; they need neither.

// functionKinds evaluates to one function of each kind whose constructor
// would compile a string: plain, async, generator (goja has no async
// generators).
var functionKinds = goja.MustCompile("kinds.js",
	"[function () {}, async function () {}, function* () {}]", false)

// maxJSONDepth bounds the nesting JSON.parse accepts: its parser recurses
// too.
const maxJSONDepth = 512

func (s *session) forbidCodeFromStrings() {
	refuse := func(what string) *goja.Object {
		// A constructor, so that new Function(...) gets this message too.
		o := s.vm.ToValue(func(goja.ConstructorCall) *goja.Object {
			panic(s.vm.NewTypeError(what + " cannot compile code from a string here: reactors and transforms are compiled when saved"))
		}).(*goja.Object)
		o.DefineDataProperty("name", s.vm.ToValue(what), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		return o
	}
	global := s.vm.GlobalObject()
	global.DefineDataProperty("eval", refuse("eval"), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)

	kinds, err := s.vm.RunProgram(functionKinds)
	if err != nil {
		panic(err)
	}
	noFunction := refuse("Function")
	list := kinds.ToObject(s.vm)
	for i := range 3 {
		proto := list.Get(strconv.Itoa(i)).ToObject(s.vm).Prototype()
		ctor := noFunction
		if i > 0 {
			ctor = refuse(proto.Get("constructor").ToObject(s.vm).Get("name").String())
		}
		ctor.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		proto.DefineDataProperty("constructor", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	global.DefineDataProperty("Function", noFunction, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)

	json := s.vm.Get("JSON").ToObject(s.vm)
	parse, ok := goja.AssertFunction(json.Get("parse"))
	if !ok {
		return
	}
	json.DefineDataProperty("parse", s.fn("parse", 2, func(call goja.FunctionCall) goja.Value {
		text := call.Argument(0).ToString() // once: a toString may answer differently twice
		if jsondepth.Of(text.String()) > maxJSONDepth {
			panic(s.newSyntaxError("JSON nested more than " + strconv.Itoa(maxJSONDepth) + " levels deep"))
		}
		args := []goja.Value{text}
		if len(call.Arguments) > 1 {
			args = append(args, call.Arguments[1:]...)
		}
		v, err := parse(json, args...)
		if err != nil {
			panic(err)
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

func (s *session) newSyntaxError(msg string) *goja.Object {
	e, err := s.vm.New(s.vm.Get("SyntaxError"), s.vm.ToValue(msg))
	if err != nil {
		return s.newError(msg)
	}
	return e
}

// Array methods that walk this.length run in Go, where nothing interrupts
// them: on a sparse array or an array-like object with a huge length
// ([].lastIndexOf.call({length: 2 ** 53 - 1}, 1)) they would burn a CPU
// long after the invocation's deadline. They are refused past the length
// an invocation could hold anyway.
var lengthWalkers = []string{
	"concat", "copyWithin", "every", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"flat", "flatMap", "forEach", "includes", "indexOf", "lastIndexOf", "map", "reduce",
	"reduceRight", "reverse", "slice", "some", "sort", "splice", "toLocaleString",
	"toReversed", "toSorted", "toSpliced", "with", "shift", "unshift",
}

func (s *session) boundLengthWalkers(arr *goja.Object) {
	maxArray := float64(s.rt.maxArrayLength())
	for _, name := range lengthWalkers {
		s.wrap(arr, name, func(call goja.FunctionCall) {
			if lengthOf(s.vm, call.This) > maxArray {
				panic(s.newRangeError("Invalid array length"))
			}
		})
	}
}

// join builds Array.prototype.join in Go, converting each element once and
// stopping as soon as the result outgrows the invocation's limit (the
// original cannot be stopped, and a toString may answer differently when
// asked twice, so no check before it would hold).
func (s *session) join(maxBytes int) *goja.Object {
	return s.fn("join", 1, func(call goja.FunctionCall) goja.Value {
		obj := call.This.ToObject(s.vm)
		n := lengthOf(s.vm, obj)
		if n > float64(s.rt.maxArrayLength()) {
			panic(s.newRangeError("Invalid array length"))
		}
		sep := ","
		if a := call.Argument(0); !goja.IsUndefined(a) {
			sep = a.String()
		}
		var b strings.Builder
		for i := 0; i < int(n); i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			if v := obj.Get(strconv.Itoa(i)); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				b.WriteString(v.String())
			}
			if b.Len() > maxBytes {
				panic(s.newRangeError("Invalid string length"))
			}
		}
		return s.vm.ToValue(b.String())
	})
}

// boundReplace wraps String.prototype.replace and replaceAll: with a
// global pattern and a long replacement the result grows as the product
// of the two ("x".repeat(3e4).replace(/x/g, "y".repeat(3e4)) reached
// 1.4 GB) inside one uninterruptible call. this is converted once, and a
// string replacement is bounded for the worst case, every position
// matching ($ patterns may insert the whole string).
func (s *session) boundReplace(str *goja.Object, maxString float64) {
	for _, name := range []string{"replace", "replaceAll"} {
		orig, ok := goja.AssertFunction(str.Get(name))
		if !ok {
			continue
		}
		str.DefineDataProperty(name, s.fn(name, 2, func(call goja.FunctionCall) goja.Value {
			if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
				panic(s.vm.NewTypeError("String.prototype." + name + " called on null or undefined"))
			}
			this := call.This.ToString()
			repl := call.Argument(1)
			if _, isFn := goja.AssertFunction(repl); !isFn && !goja.IsUndefined(repl) {
				repl = repl.ToString()
				n := float64(stringLength(this))
				r := float64(stringLength(repl)) + float64(strings.Count(repl.String(), "$"))*n
				if n+(n+1)*r > maxString {
					panic(s.newRangeError("Invalid string length"))
				}
			}
			args := []goja.Value{call.Argument(0), repl}
			v, err := orig(this, args...)
			if err != nil {
				panic(err)
			}
			return v
		}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}
