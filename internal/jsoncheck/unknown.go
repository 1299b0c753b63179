package jsoncheck

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// UnknownFieldError names a key of a JSON object that no field of the Go
// struct the object decodes into takes. encoding/json, told to
// DisallowUnknownFields, reports one only as the text of an error it
// makes with fmt.Errorf; [UnknownField] finds the same key, as a value.
type UnknownFieldError struct {
	// Name is the key as sent (decoded).
	Name string
}

func (e *UnknownFieldError) Error() string {
	return "jsoncheck: unknown field " + strconv.Quote(e.Name)
}

// UnknownField returns the first key of text, in the order of the text,
// that no field of the struct it decodes into takes when text is decoded
// into a value of type t (through pointers, slices, arrays and maps), or
// nil. Keys match fields as encoding/json matches them: by the field's
// JSON name (its tag, or its Go name), exactly or else ignoring case, the
// fields of embedded structs included. A value that decodes itself (a
// json.Unmarshaler or encoding.TextUnmarshaler, such as time.Time) or goes
// into an interface is not looked into. Text that is not JSON has no
// unknown field as far as it reads. It is for an error path: it decodes
// text again, token by token.
func UnknownField(text []byte, t reflect.Type) *UnknownFieldError {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	u, _ := unknownIn(dec, t)
	return u
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unknownIn reads one value from dec, which decodes into t.
func unknownIn(dec *json.Decoder, t reflect.Type) (*UnknownFieldError, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil, nil // a scalar
	}
	opaque := t == nil || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
	switch {
	case opaque:
		return nil, skipRest(dec)
	case d == '{' && t.Kind() == reflect.Struct:
		fields := jsonFields(t, nil)
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := k.(string)
			ft, ok := fieldType(fields, name)
			if !ok {
				return &UnknownFieldError{Name: name}, nil
			}
			if u, err := unknownIn(dec, ft); u != nil || err != nil {
				return u, err
			}
		}
	case d == '{' && t.Kind() == reflect.Map:
		for dec.More() {
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if u, err := unknownIn(dec, t.Elem()); u != nil || err != nil {
				return u, err
			}
		}
	case d == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for dec.More() {
			if u, err := unknownIn(dec, t.Elem()); u != nil || err != nil {
				return u, err
			}
		}
	default: // a type error: encoding/json reports it
		return nil, skipRest(dec)
	}
	_, err = dec.Token() // the closing delimiter
	return nil, err
}

// skipRest reads the rest of the array or object whose opening delimiter
// was just read.
func skipRest(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// field is a struct field by its JSON name.
type field struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the fields encoding/json decodes into a struct of type
// t, those of embedded structs included, appended to fields.
func jsonFields(t reflect.Type, fields []field) []field {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			fields = jsonFields(ft, fields)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, field{name: name, typ: f.Type})
	}
	return fields
}

// fieldType finds the field a key goes into: its exact name, else one
// equal to it ignoring case.
func fieldType(fields []field, key string) (reflect.Type, bool) {
	for _, f := range fields {
		if f.name == key {
			return f.typ, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.typ, true
		}
	}
	return nil, false
}
