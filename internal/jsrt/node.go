package jsrt

import (
	_ "embed"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/require"
)

// Node's buffer, url and util modules come from goja_nodejs. Its
// require.Registry is not used: for a name it does not know it would load
// a file (node_modules, relative paths). Each module's loader runs on a
// fresh module object instead, when the allow-list asks for it.

// nodeModule runs a goja_nodejs module loader and returns the exports,
// with their functions renamed.
func (s *session) nodeModule(load require.ModuleLoader) goja.Value {
	module := s.vm.NewObject()
	module.Set("exports", s.vm.NewObject())
	load(s.vm, module)
	out := module.Get("exports")
	if o, ok := out.(*goja.Object); ok {
		s.rename(o, map[*goja.Object]bool{})
	}
	return out
}

//go:embed names.js
var accessorNamesSource string

var accessorNamesProgram = mustCompileJS("names.js", accessorNamesSource)

// rename gives each function reachable from o (through its own properties
// and those of the functions and prototypes among them) that goja named
// after its Go function ("github.com/dop251/goja_nodejs/buffer.
// (*Buffer).from-fm", which String(fn) and stack traces would show the
// code) the name of its property instead.
func (s *session) rename(o *goja.Object, seen map[*goja.Object]bool) {
	if seen[o] {
		return
	}
	seen[o] = true
	for _, key := range o.GetOwnPropertyNames() {
		var v goja.Value
		if s.vm.Try(func() { v = o.Get(key) }) != nil {
			// A getter that refuses o itself, such as URL.prototype.href,
			// whose function Go cannot reach: names.js renames the
			// functions of o's string-keyed properties, accessors
			// included.
			s.renameInJS(o)
			break
		}
		s.renameValue(v, key, seen)
	}
	for _, sym := range o.Symbols() {
		var v goja.Value
		if s.vm.Try(func() { v = o.GetSymbol(sym) }) == nil {
			s.renameValue(v, "["+sym.String()+"]", seen)
		}
	}
}

func (s *session) renameInJS(o *goja.Object) {
	fn, err := s.vm.RunProgram(accessorNamesProgram)
	if err != nil {
		panic(err)
	}
	rename, _ := goja.AssertFunction(fn)
	if _, err := rename(goja.Undefined(), o); err != nil {
		panic(err)
	}
}

// renameValue renames v, the value of the property key, when it is a
// function, and walks it (its static methods, its prototype); prototype
// objects are walked too.
func (s *session) renameValue(v goja.Value, key string, seen map[*goja.Object]bool) {
	o, ok := v.(*goja.Object)
	if !ok {
		return
	}
	if _, isFn := goja.AssertFunction(o); !isFn {
		if key == "prototype" {
			s.rename(o, seen)
		}
		return
	}
	if name := o.Get("name"); name != nil && strings.Contains(name.String(), "/") {
		o.DefineDataProperty("name", s.vm.ToValue(key), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	s.rename(o, seen)
}
