package jsrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// Bounds on converted values, beyond which conversion fails rather than
// recursing or allocating without end.
const (
	maxDepth       = 500     // nesting of objects and arrays
	maxExportItems = 1 << 20 // values in one exported result
)

// toJS converts a JSON-compatible Go value into plain JavaScript values:
// ordinary objects and arrays, never views of Go maps, so the code cannot
// change the caller's data and gets normal semantics (JSON.stringify,
// Array.isArray, spread). Map keys are defined in sorted order. Other Go
// types go through encoding/json.
func (s *session) toJS(v any) (goja.Value, error) {
	return s.toJSDepth(v, 0)
}

func (s *session) toJSDepth(v any, depth int) (goja.Value, error) {
	if depth > maxDepth {
		return nil, errors.New("the value is nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		return goja.Null(), nil
	case goja.Value:
		return nil, errors.New("a JavaScript value from another runtime")
	case string:
		return s.vm.ToValue(x), nil
	case bool, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return s.vm.ToValue(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return s.vm.ToValue(i), nil
		}
		if f, err := x.Float64(); err == nil {
			return s.vm.ToValue(f), nil
		}
		return s.vm.ToValue(string(x)), nil
	case map[string]any:
		obj := s.vm.NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			jv, err := s.toJSDepth(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			// Define, not Set: a "__proto__" key must stay a property.
			obj.DefineDataProperty(k, jv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		}
		return obj, nil
	case []any:
		items := make([]any, len(x))
		for i, e := range x {
			jv, err := s.toJSDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			items[i] = jv
		}
		return s.vm.NewArray(items...), nil
	case []string:
		items := make([]any, len(x))
		for i, e := range x {
			items[i] = s.vm.ToValue(e)
		}
		return s.vm.NewArray(items...), nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return s.toJSDepth(m, depth)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("a %T is not JSON-compatible", v)
	}
	plain, err := decodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("a %T is not JSON-compatible", v)
	}
	return s.toJSDepth(plain, depth)
}

// decodeJSON decodes one JSON value keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// marshalJSON encodes v without HTML escaping.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// request builds the code's req: the fields of req plus client.
func (s *session) request(req map[string]any, client Client) (goja.Value, error) {
	v, err := s.toJS(req)
	if err != nil {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the request cannot be given to the code: " + err.Error()}
	}
	obj, ok := v.(*goja.Object)
	if !ok { // req was nil
		obj = s.vm.NewObject()
	}
	var c goja.Value = goja.Null()
	if client != nil {
		c = s.clientObject(client)
	}
	obj.DefineDataProperty("client", c, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	return obj, nil
}

// exportResult exports what the code returned.
func (s *session) exportResult(v goja.Value) (any, error) {
	out, err := s.export(v, "result")
	var ex *goja.Exception
	var je *Error
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &ex):
		return nil, s.thrown(ex.Value())
	case errors.As(err, &je):
		return nil, je
	}
	return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: err.Error()}
}

// export converts a JS value into JSON-compatible Go values
// (map[string]any, []any, string, float64, bool, nil) with JSON.stringify's
// rules (toJSON is called, undefined properties are left out, NaN and
// Infinity become nil, boxed primitives are unboxed), except that a
// function, a symbol, a BigInt or a cycle is an error naming where it is.
// The code's getters, proxies and toJSON methods run, under the session's
// limits: an exception from them is returned as a *goja.Exception, a limit
// as its *Error.
func (s *session) export(v goja.Value, root string) (out any, err error) {
	x := &exporter{s: s, path: []string{root}}
	if gerr := s.guard(func() { out, _, err = x.value(v, true) }); gerr != nil {
		return nil, gerr
	}
	return out, err
}

type exporter struct {
	s         *session
	path      []string
	ancestors []*goja.Object
	count     int
}

func (x *exporter) fail(what string) error {
	return fmt.Errorf("%s is %s, which is not JSON-compatible", strings.Join(x.path, ""), what)
}

// value exports v; omit reports undefined (left out of objects).
func (x *exporter) value(v goja.Value, callToJSON bool) (out any, omit bool, err error) {
	x.count++
	if x.count > maxExportItems {
		return nil, false, fmt.Errorf("%s has more than %d values", x.path[0], maxExportItems)
	}
	if v == nil || goja.IsUndefined(v) {
		return nil, true, nil
	}
	if goja.IsNull(v) {
		return nil, false, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return x.primitive(v)
	}
	if obj.ClassName() == "Function" {
		return nil, false, x.fail("a function")
	}
	if callToJSON {
		if toJSON, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
			key := ""
			if len(x.path) > 1 {
				key = strings.Trim(x.path[len(x.path)-1], ".[]")
			}
			r, err := toJSON(obj, x.s.vm.ToValue(key))
			if err != nil {
				panic(err) // rethrown to export's guard
			}
			return x.value(r, false)
		}
	}
	switch obj.ClassName() {
	case "String":
		return x.primitive(obj.ToString())
	case "Number", "Boolean":
		return x.primitive(x.s.vm.ToValue(obj.Export()))
	case "Symbol":
		return nil, false, x.fail("a symbol")
	case "BigInt":
		return nil, false, x.fail("a BigInt")
	}
	if slices.Contains(x.ancestors, obj) {
		return nil, false, x.fail("a reference to itself (a cycle)")
	}
	if len(x.ancestors) >= maxDepth {
		return nil, false, x.fail("nested too deeply")
	}
	x.ancestors = append(x.ancestors, obj)
	defer func() { x.ancestors = x.ancestors[:len(x.ancestors)-1] }()
	if obj.ClassName() == "Array" {
		return x.array(obj)
	}
	keys := obj.Keys()
	for _, k := range keys {
		// Keys come out of goja with lone surrogates replaced by U+FFFD:
		// such a key would be another key's, or name nothing and be left
		// out. Only when one holds U+FFFD are the keys read as
		// JavaScript strings, and a lone surrogate refused.
		if strings.ContainsRune(k, utf8.RuneError) {
			if err := x.checkKeys(obj); err != nil {
				return nil, false, err
			}
			break
		}
	}
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		x.path = append(x.path, "."+k)
		e, omit, err := x.value(obj.Get(k), true)
		x.path = x.path[:len(x.path)-1]
		if err != nil {
			return nil, false, err
		}
		if !omit {
			m[k] = e
		}
	}
	return m, false, nil
}

func (x *exporter) array(obj *goja.Object) (any, bool, error) {
	n := obj.Get("length").ToInteger()
	if n > maxExportItems {
		return nil, false, fmt.Errorf("%s has more than %d values", x.path[0], maxExportItems)
	}
	out := make([]any, n)
	for i := range out {
		k := strconv.Itoa(i)
		x.path = append(x.path, "["+k+"]")
		e, _, err := x.value(obj.Get(k), true)
		x.path = x.path[:len(x.path)-1]
		if err != nil {
			return nil, false, err
		}
		out[i] = e
	}
	return out, false, nil
}

// checkKeys refuses obj if one of its own keys, read as a JavaScript
// string, holds a lone surrogate.
func (x *exporter) checkKeys(obj *goja.Object) error {
	if x.s.ownKeys == nil {
		return x.fail("an object whose keys cannot be read")
	}
	raw, err := x.s.ownKeys(goja.Undefined(), obj)
	if err != nil {
		panic(err) // a proxy's ownKeys trap threw: rethrown to export's guard
	}
	list, ok := raw.(*goja.Object)
	if !ok {
		return x.fail("an object whose keys cannot be read")
	}
	n := list.Get("length").ToInteger()
	for i := int64(0); i < n; i++ {
		if s, ok := list.Get(strconv.FormatInt(i, 10)).(goja.String); ok && hasLoneSurrogate(s) {
			return x.fail("an object with a key that is not valid Unicode (a lone surrogate)")
		}
	}
	return nil
}

// hasLoneSurrogate reports whether s holds a UTF-16 surrogate that is not
// half of a pair.
func hasLoneSurrogate(s goja.String) bool {
	n := s.Length()
	for i := 0; i < n; i++ {
		switch c := s.CharAt(i); {
		case c >= 0xD800 && c <= 0xDBFF:
			if i+1 < n {
				if d := s.CharAt(i + 1); d >= 0xDC00 && d <= 0xDFFF {
					i++
					continue
				}
			}
			return true
		case c >= 0xDC00 && c <= 0xDFFF:
			return true
		}
	}
	return false
}

func (x *exporter) primitive(v goja.Value) (any, bool, error) {
	if v == nil {
		return nil, true, nil
	}
	if _, ok := v.(*goja.Symbol); ok {
		return nil, false, x.fail("a symbol")
	}
	switch e := v.Export().(type) {
	case string:
		// Export replaces a lone surrogate with U+FFFD: what the code
		// made is refused rather than changed (an API caller's "\ud800"
		// is a 400 too). Only a string holding U+FFFD is looked at.
		if s, ok := v.(goja.String); ok && strings.ContainsRune(e, utf8.RuneError) && hasLoneSurrogate(s) {
			return nil, false, x.fail("a string that is not valid Unicode (a lone surrogate)")
		}
		return e, false, nil
	case bool:
		return e, false, nil
	case int64:
		return float64(e), false, nil
	case float64:
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, false, nil
		}
		return e, false, nil
	case *big.Int:
		return nil, false, x.fail("a BigInt")
	case nil:
		return nil, goja.IsUndefined(v), nil
	}
	return nil, false, x.fail("a " + v.ExportType().String())
}
