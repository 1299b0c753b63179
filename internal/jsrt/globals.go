package jsrt

import (
	"github.com/dop251/goja"
)

// The sandbox's globals (console, timers, queueMicrotask, atob, btoa,
// Buffer, URL, URLSearchParams, TextEncoder, TextDecoder, fetch, Headers
// and the error classes) are created on first use: most invocations touch few
// of them, and creating them all would cost more than the rest of an
// invocation. They live on a dynamic object placed between the global
// object and Object.prototype, so a lookup of a name the global object
// lacks reaches it; the code can still assign or declare any of these
// names, which then shadows it as usual.
type lazyGlobals struct {
	s      *session
	values map[string]goja.Value
}

// globalMakers are the lazily created globals.
var globalMakers = map[string]func(s *session) goja.Value{
	"console":         (*session).console,
	"setTimeout":      func(s *session) goja.Value { return s.timerFunc(false) },
	"setInterval":     func(s *session) goja.Value { return s.timerFunc(true) },
	"clearTimeout":    (*session).clearTimerFunc,
	"clearInterval":   (*session).clearTimerFunc,
	"queueMicrotask":  (*session).queueMicrotask,
	"atob":            (*session).atob,
	"btoa":            (*session).btoa,
	"Buffer":          func(s *session) goja.Value { return s.moduleExport("buffer", "Buffer") },
	"URL":             func(s *session) goja.Value { return s.moduleExport("url", "URL") },
	"URLSearchParams": func(s *session) goja.Value { return s.moduleExport("url", "URLSearchParams") },
	"TextEncoder":     func(s *session) goja.Value { return s.encoding().Get("TextEncoder") },
	"TextDecoder":     func(s *session) goja.Value { return s.encoding().Get("TextDecoder") },
	"fetch":           func(s *session) goja.Value { return s.web().Get("fetch") },
	"Headers":         func(s *session) goja.Value { return s.web().Get("Headers") },
}

var globalNames = func() []string {
	names := make([]string, 0, len(globalMakers)+len(classNames))
	for n := range globalMakers {
		names = append(names, n)
	}
	return append(names, classNames...)
}()

func init() {
	for _, name := range classNames {
		globalMakers[name] = func(s *session) goja.Value { return s.errorClasses().Get(name) }
	}
}

func (g *lazyGlobals) Get(key string) goja.Value {
	if v, ok := g.values[key]; ok {
		return v
	}
	mk, ok := globalMakers[key]
	if !ok {
		return nil
	}
	v := mk(g.s)
	if g.values == nil {
		g.values = map[string]goja.Value{}
	}
	g.values[key] = v
	return v
}

// Set refuses: an assignment to one of these names defines a property on
// the global object instead, which shadows this one.
func (g *lazyGlobals) Set(string, goja.Value) bool { return false }

func (g *lazyGlobals) Has(key string) bool {
	_, ok := globalMakers[key]
	return ok
}

func (g *lazyGlobals) Delete(string) bool { return true }

func (g *lazyGlobals) Keys() []string { return globalNames }

// installGlobals puts the lazy globals behind the global object.
func (s *session) installGlobals() {
	g := s.vm.GlobalObject()
	dyn := s.vm.NewDynamicObject(&lazyGlobals{s: s})
	dyn.SetPrototype(g.Prototype())
	g.SetPrototype(dyn)
}
