package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
)

// invalid is a one-field validation error.
func invalid(field, msg string) error {
	return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the request is invalid", Fields: map[string][]string{field: {msg}}}
}

// decodeJSON reads one JSON value of at most MaxBodyBytes into dst,
// refusing unknown fields, strings that encoding/json would decode
// with a loss (invalid UTF-8, lone surrogate escapes such as "\ud800"),
// naming their path: it would replace them with U+FFFD silently, and keys
// given twice in an object: the same key (jsoncheck.Check), or keys that
// go into one struct field, equal but for case (jsoncheck.Fold).
func (a *api) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	_, err := a.decodeJSONDepth(w, r, dst)
	return err
}

// readBody reads a JSON body of at most MaxBodyBytes, refusing another
// media type or charset.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, &tokenvault.Error{Kind: tokenvault.UnsupportedMediaType, Message: "the body must be application/json"}
		}
		// JSON is UTF-8 (RFC 8259); a body declared in another charset
		// would be read as UTF-8 all the same, and mean something else.
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return nil, &tokenvault.Error{Kind: tokenvault.UnsupportedMediaType, Message: "the body must be UTF-8 JSON: charset " + strconv.Quote(cs) + " is not accepted; send charset=utf-8 or none"}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody))
	if err != nil {
		return nil, decodeError(err)
	}
	return body, nil
}

// decodeJSONDepth is decodeJSON, also returning how deeply the body nests:
// the scan that judges its strings measures it too.
func (a *api) decodeJSONDepth(w http.ResponseWriter, r *http.Request, dst any) (int, error) {
	body, err := a.readBody(w, r)
	if err != nil {
		return 0, err
	}
	depth, folds, e := jsoncheck.ScanFolds(body)
	if e != nil {
		return 0, invalid(e.Path, e.Message())
	}
	if raw, ok := dst.(*json.RawMessage); ok && json.Valid(body) {
		// The Vault decodes it (a merge patch): one JSON value, checked
		// above, needs no decoder and no copy. The Vault holds its keys
		// to the fields they go into.
		*raw = body
		return depth, nil
	}
	if folds {
		// Keys equal but for case go into one field of a struct:
		// {"permissions": [...], "PERMISSIONS": [...]} would grant the
		// second. In a map they are two keys, and legal.
		if e := jsoncheck.FoldText(body, reflect.TypeOf(dst)); e != nil {
			return 0, invalid(e.Path, e.Message())
		}
	}
	return depth, decodeInto(body, dst)
}

// decodeInto decodes body, which jsoncheck.Scan found sound, into dst.
func decodeInto(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// A number where any value goes (token data, configuration) keeps its
	// text, as in process: as a float64 it would lose digits past 2^53.
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		// encoding/json does not say which date-time it could not read.
		if field, ok := badTime(body, reflect.TypeOf(dst)); ok {
			return invalid(field, dateTimeMessage)
		}
		return decodeError(typedDecodeError(err, body, dst))
	}
	if _, err := dec.Token(); err != io.EOF {
		return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the body must hold exactly one JSON value"}
	}
	if field, ok := nullInStringMap(body, reflect.TypeOf(dst)); ok {
		return invalid(field, "values must be strings, not null")
	}
	return nil
}

// decodeDoc reads a body the Vault takes as any JSON value (Tokenize,
// Detokenize): scanned once (jsoncheck.Scan: strings, duplicate keys and
// depth together) and decoded once, numbers as json.Number. The Vault
// takes the jsoncheck.Doc as it is, holding only its depth to
// tokenvault.MaxJSONDepth; a body over it is not decoded here at all.
func (a *api) decodeDoc(w http.ResponseWriter, r *http.Request) (jsoncheck.Doc, error) {
	body, err := a.readBody(w, r)
	if err != nil {
		return jsoncheck.Doc{}, err
	}
	depth, e := jsoncheck.Scan(body)
	if e != nil {
		return jsoncheck.Doc{}, invalid(e.Path, e.Message())
	}
	if depth > tokenvault.MaxJSONDepth && json.Valid(body) {
		// The Vault refuses it, naming its bound; a body that is not
		// JSON at all is told so first, below.
		return jsoncheck.Checked(nil, depth), nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers keep their text, as in process
	var v any
	if err := dec.Decode(&v); err != nil {
		return jsoncheck.Doc{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsoncheck.Doc{}, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the body must hold exactly one JSON value"}
	}
	return jsoncheck.Checked(v, depth), nil
}

// typedDecodeError is err, the failure to decode body into dst, or, when
// it is none of the errors encoding/json types (a syntax, type or date-time
// error), the *jsoncheck.UnknownFieldError it stands for: encoding/json
// reports an unknown field only as text, which is never matched.
func typedDecodeError(err error, body []byte, dst any) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		pe  *time.ParseError
	)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syn) || errors.As(err, &typ) || errors.As(err, &pe) {
		return err
	}
	if u := jsoncheck.UnknownField(body, reflect.TypeOf(dst)); u != nil {
		return u
	}
	return err
}

// decodeError explains a JSON decoding failure without echoing the body.
func decodeError(err error) error {
	var (
		mbe  *http.MaxBytesError
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		errT = tokenvault.Invalid
	)
	switch {
	case errors.As(err, &mbe):
		return &tokenvault.Error{Kind: tokenvault.TooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", mbe.Limit)}
	case errors.Is(err, io.EOF):
		return &tokenvault.Error{Kind: errT, Message: "a JSON body is required"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &tokenvault.Error{Kind: errT, Message: "the body is truncated JSON"}
	case errors.As(err, &syn):
		return &tokenvault.Error{Kind: errT, Message: fmt.Sprintf("the body is not valid JSON (at byte %d)", syn.Offset)}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return &tokenvault.Error{Kind: errT, Message: fmt.Sprintf("the body must be a JSON %s", jsonKind(typ.Type.Kind().String()))}
		}
		// typ.Value may hold the literal ("number 99999..."): only its kind.
		got, _, _ := strings.Cut(typ.Value, " ")
		want := jsonKind(typ.Type.Kind().String())
		if want == got && got == "number" {
			// A number where an integer goes: a fraction, or too large
			// ("must be a number, not a number" said nothing).
			return invalid(field, "must be a whole number within the range of the field")
		}
		return invalid(field, fmt.Sprintf("must be a %s, not a %s", want, got))
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return &tokenvault.Error{Kind: errT, Message: "a date-time in the body is not ISO 8601 (RFC 3339), such as 2030-01-02T15:04:05Z"}
	}
	var unknown *jsoncheck.UnknownFieldError
	if errors.As(err, &unknown) {
		return invalid(unknown.Name, "unknown field")
	}
	// Never err's text: it may quote what was sent.
	return &tokenvault.Error{Kind: errT, Message: "the body could not be decoded"}
}

// dateTimeMessage is what a field error says about a date-time that is not
// one.
const dateTimeMessage = "must be an ISO 8601 (RFC 3339) date-time string such as 2030-01-02T15:04:05Z"

var timeType = reflect.TypeFor[time.Time]()

// badTime finds the first date-time field of t (a struct, through
// pointers, slices and maps) whose value in body is not an RFC 3339
// string, and returns its path. It runs only after decoding failed.
func badTime(body []byte, t reflect.Type) (string, bool) {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return "", false
	}
	return findTyped(doc, t, "", func(v any, t reflect.Type) (bad, leaf bool) {
		if t != timeType {
			return false, false
		}
		s, ok := v.(string)
		if !ok {
			return true, true
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err != nil, true
	})
}

// nullInStringMap finds the first null given as a value of a map of
// strings in t (metadata: {"k": null}), which encoding/json would store as
// "" without a word, and returns its path. Only a body that holds "null"
// is looked at again.
func nullInStringMap(body []byte, t reflect.Type) (string, bool) {
	if !bytes.Contains(body, []byte("null")) || !holdsStringMap(t) {
		return "", false
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return "", false
	}
	return findTyped(doc, t, "", func(v any, t reflect.Type) (bad, leaf bool) {
		if t.Kind() != reflect.Map || t.Elem().Kind() != reflect.String {
			return false, false
		}
		obj, _ := v.(map[string]any)
		for _, x := range obj {
			if x == nil {
				return true, true
			}
		}
		return false, true
	})
}

// stringMapTypes caches holdsStringMap by type.
var stringMapTypes sync.Map // reflect.Type -> bool

// holdsStringMap reports whether a value of type t can hold a map of
// strings (through pointers, struct fields, slices, arrays and maps): only
// then is a body decoded into it read again by nullInStringMap.
func holdsStringMap(t reflect.Type) bool {
	if v, ok := stringMapTypes.Load(t); ok {
		return v.(bool)
	}
	found := findType(t, map[reflect.Type]bool{}, func(t reflect.Type) bool {
		return t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String
	})
	stringMapTypes.Store(t, found)
	return found
}

// findType reports whether t or a type it is made of satisfies match.
func findType(t reflect.Type, seen map[reflect.Type]bool, match func(reflect.Type) bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if match(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return findType(t.Elem(), seen, match)
	case reflect.Struct:
		for i := range t.NumField() {
			if findType(t.Field(i).Type, seen, match) {
				return true
			}
		}
	}
	return false
}

// findTyped walks the decoded JSON v alongside the Go type t it decodes
// into (structs by their JSON names, through pointers, slices and maps)
// and returns the path of the first value check calls bad; check's leaf
// stops the walk below a value.
func findTyped(v any, t reflect.Type, path string, check func(v any, t reflect.Type) (bad, leaf bool)) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return "", false
	}
	if bad, leaf := check(v, t); bad || leaf {
		return path, bad
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			if f.Anonymous && name == "" {
				if p, bad := findTyped(v, f.Type, path, check); bad {
					return p, true
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			if p, bad := findTyped(obj[name], f.Type, joinPath(path, name), check); bad {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return "", false
		}
		for i, x := range arr {
			if p, bad := findTyped(x, t.Elem(), path+"["+strconv.Itoa(i)+"]", check); bad {
				return p, true
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		for k, x := range obj {
			if p, bad := findTyped(x, t.Elem(), joinPath(path, k), check); bad {
				return p, true
			}
		}
	}
	return "", false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonKind names a Go kind the way a JSON user would.
func jsonKind(k string) string {
	switch k {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int64", "int32", "uint", "uint64", "uint32", "float64", "float32":
		return "number"
	case "bool":
		return "boolean"
	}
	return k
}

// pageRequest reads page, size and the cursor start from the query: absent
// means the default, a page or size that is not a positive integer is a 400.
func pageRequest(r *http.Request) (tokenvault.PageRequest, error) {
	var p tokenvault.PageRequest
	for _, q := range []struct {
		name string
		dst  *int
	}{{"page", &p.Page}, {"size", &p.Size}} {
		s := r.URL.Query().Get(q.name)
		if s == "" {
			continue
		}
		// A negative number goes on: the Vault names what is wrong with
		// it, and with the other, as in process. 0 is the Vault's "not
		// set", so it is refused here.
		n, err := strconv.Atoi(s)
		if err != nil || n == 0 {
			return p, invalid(q.name, "must be a positive integer")
		}
		*q.dst = n
	}
	p.Start = r.URL.Query().Get("start")
	return p, nil
}

// MergePatchType is the only content type PATCH accepts (RFC 7386).
const MergePatchType = "application/merge-patch+json"

// decodeMergePatch reads a JSON merge patch body, refusing any other
// content type with 415.
func (a *api) decodeMergePatch(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != MergePatchType {
		return nil, &tokenvault.Error{Kind: tokenvault.UnsupportedMediaType, Message: "PATCH bodies must be " + MergePatchType}
	}
	var patch json.RawMessage
	if err := a.decodeJSON(w, r, &patch); err != nil {
		return nil, err
	}
	return patch, nil
}
