package jsrt

import (
	_ "embed"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

//go:embed classes.js
var classesSource string

// classesProgram is compiled once; a goja.Program can run in many runtimes
// at the same time.
var classesProgram = mustCompileJS("classes.js", classesSource)

func mustCompileJS(name, src string) *goja.Program {
	ast, err := parser.ParseFile(nil, name, src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		panic("jsrt: " + err.Error())
	}
	p, err := goja.CompileAST(ast, false)
	if err != nil {
		panic("jsrt: " + err.Error())
	}
	return p
}

// classNames are the globals classes.js defines, in errorClasses.
var classNames = []string{
	"AuthenticationError", "AuthorizationError", "BadRequestError",
	"InvalidPaymentMethodError", "RateLimitError", "ReactorRuntimeError",
	"ServiceUnavailableError", "CustomHttpResponseError",
}

// brand is what mark recorded for an instance of an error class.
type brand struct {
	class string
	arg   goja.Value
}

// errorClasses builds the classes once per session and returns them
// (a frozen object, also require('@svc/errors')).
func (s *session) errorClasses() *goja.Object {
	if s.classes != nil {
		return s.classes
	}
	fn, err := s.vm.RunProgram(classesProgram)
	if err != nil {
		panic(err)
	}
	build, _ := goja.AssertFunction(fn)
	mark := s.fn("mark", 3, func(call goja.FunctionCall) goja.Value {
		if obj, ok := call.Argument(0).(*goja.Object); ok {
			if s.brands == nil {
				s.brands = map[*goja.Object]brand{}
			}
			s.brands[obj] = brand{class: call.Argument(1).String(), arg: call.Argument(2)}
		}
		return goja.Undefined()
	})
	out, err := build(goja.Undefined(), mark)
	if err != nil {
		panic(err)
	}
	s.classes = out.ToObject(s.vm)
	return s.classes
}
