package jsoncheck

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Value is Check for a Go value about to be encoded as JSON: it finds the
// first string (a map key included) that is not valid UTF-8, which
// encoding/json would encode as U+FFFD, and returns its path as encoding/json
// names it (struct fields by their json tags). Raw JSON inside v
// (json.RawMessage, or what a json.Marshaler produces) is held to Check.
// Offset is 0: there is no text.
func Value(v any) *Error {
	return value(reflect.ValueOf(v), "", 0)
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
	marshalerType  = reflect.TypeFor[json.Marshaler]()
	textType       = reflect.TypeFor[encoding.TextMarshaler]()
)

// maxValueDepth stops the walk of a cyclic or absurdly deep value;
// encoding/json refuses those itself.
const maxValueDepth = 1000

func value(v reflect.Value, path string, depth int) *Error {
	if depth > maxValueDepth || !v.IsValid() {
		return nil
	}
	t := v.Type()
	switch {
	case t == rawMessageType:
		return prefixed(Check(v.Bytes()), path)
	case t == numberType:
		return nil
	case t.Implements(marshalerType) && (t.Kind() != reflect.Pointer || !v.IsNil()):
		b, err := v.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return nil // encoding/json reports it
		}
		return prefixed(Check(b), path)
	case t.Implements(textType) && (t.Kind() != reflect.Pointer || !v.IsNil()):
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err == nil && !utf8.Valid(b) {
			return &Error{Path: path, Reason: ReasonUTF8}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return &Error{Path: path, Reason: ReasonUTF8}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return value(v.Elem(), path, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return nil // []byte is base64
		}
		for i := range v.Len() {
			if e := value(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); e != nil {
				return e
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			name := ""
			if k.Kind() == reflect.String {
				name = k.String()
				if !utf8.ValidString(name) {
					return &Error{Path: path, Key: true, Reason: ReasonUTF8}
				}
			} else if e := value(k, path, depth+1); e != nil {
				e.Key = true
				return e
			}
			if e := value(iter.Value(), Join(path, name), depth+1); e != nil {
				return e
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			fp := path
			if !f.Anonymous || name != "" {
				if name == "" {
					name = f.Name
				}
				fp = Join(path, name)
			}
			if e := value(v.Field(i), fp, depth+1); e != nil {
				return e
			}
		}
	}
	return nil
}

// prefixed puts e's path under path.
func prefixed(e *Error, path string) *Error {
	if e != nil {
		e.Path = Join(path, e.Path)
		e.Offset = 0
	}
	return e
}
