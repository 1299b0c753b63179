package jsrt

import (
	"strconv"

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
			panic(s.hostTypeError(what + " cannot compile code from a string here: reactors and transforms are compiled when saved"))
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
	if err == nil {
		s.markHostError(e)
	}
	if err != nil {
		return s.newError(msg)
	}
	return e
}
