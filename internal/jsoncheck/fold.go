package jsoncheck

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/jsondepth"
)

// Keys equal but for case. encoding/json decodes a key into the struct
// field of that name or, when no field has it exactly, into the first
// field whose name equals it under strings.EqualFold (simple Unicode case
// folding: "PERMISSIONS", "permiſſions" with U+017F and "\u212aey" with the
// Kelvin sign all go where "permissions" or "key" go). Two keys of one
// object that go into one field are that field given twice: the decoder
// keeps the last without a word, and a reader that matches keys exactly
// (a log pipeline, a WAF, another JSON library) sees the other one. Check
// refuses only keys equal once decoded, since it does not know the type;
// Fold knows it and refuses keys that land in one field. A map keeps
// exact keys: {"a": 1, "A": 2} is two entries of a map, and legal.

// ScanFolds is Scan that also reports whether some object of text may
// hold two keys equal but for case: when it does not, no two keys of text
// can go into one struct field and Fold need not be asked.
func ScanFolds(text []byte) (depth int, folds bool, e *Error) {
	depth, folds, e = check(text, true)
	if e != nil {
		depth = jsondepth.Of(text) // the walk stopped at e
	}
	return depth, folds, e
}

// FoldText is Fold for text, a JSON text that decodes into a value of
// type t: nil when text is not JSON (the decoder says so).
func FoldText(text []byte, t reflect.Type) *Error {
	var v any
	if json.Unmarshal(text, &v) != nil {
		return nil
	}
	return Fold(v, t)
}

// Fold returns the first member of v, a decoded JSON value (map[string]any,
// []any, scalars) that decodes into a value of type t, whose object has
// another key that encoding/json decodes into the same struct field, or
// nil. Its Path names the field by its JSON name ("permissions",
// "rules[0].permissions"), and its Reason is ReasonFoldDuplicate. Objects are
// looked into through pointers, structs, slices, arrays and maps, not
// into a value that decodes itself (json.Unmarshaler,
// encoding.TextUnmarshaler) or goes into an interface. Of several such
// members of one object, the one whose field comes first is named.
func Fold(v any, t reflect.Type) *Error {
	return fold(v, t, "", 0)
}

func fold(v any, t reflect.Type, path string, depth int) *Error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || v == nil || depth > maxValueDepth || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t, nil)
		by := make(map[int]int, len(obj)) // field index -> keys that go into it
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		at := make([]int, len(keys))
		for j, k := range keys {
			at[j] = fieldIndex(fields, k)
			if at[j] >= 0 {
				by[at[j]]++
			}
		}
		for i, f := range fields {
			if by[i] > 1 {
				return &Error{Path: Join(path, f.name), Reason: ReasonFoldDuplicate}
			}
		}
		for j, k := range keys {
			if at[j] < 0 {
				continue // an unknown field: the decoder refuses it
			}
			f := fields[at[j]]
			if e := fold(obj[k], f.typ, Join(path, f.name), depth+1); e != nil {
				return e
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if e := fold(obj[k], t.Elem(), Join(path, k), depth+1); e != nil {
				return e
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, x := range arr {
			if e := fold(x, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1); e != nil {
				return e
			}
		}
	}
	return nil
}

// fieldIndex is the index in fields of the field a key goes into (see
// fieldType), or -1.
func fieldIndex(fields []field, key string) int {
	for i, f := range fields {
		if f.name == key {
			return i
		}
	}
	for i, f := range fields {
		if strings.EqualFold(f.name, key) {
			return i
		}
	}
	return -1
}
