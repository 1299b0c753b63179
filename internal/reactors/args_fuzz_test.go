package reactors

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// FuzzPrepareArgs shapes arbitrary arguments with arbitrary
// request_parameters. The parameters are given one a line as
// "name:type", with a "?" after the type for an optional one
// ("card.number:string", "amount:number?"); the name is what precedes the
// last colon, so it may hold any character. The arguments are JSON,
// decoded as the Vault decodes them (json.Number), skipped when invalid.
//
// PrepareArgs must not panic nor modify the arguments, and must either
// fail with an Invalid *unit.Error naming "args" or "args.<a declared name>",
// or return the arguments as they are (no parameters declared) or an
// object holding exactly the declared parameters present in the
// arguments, each cast to its type without loss: string to string,
// number to a json.Number in JSON's grammar that is the argument itself
// (as sent, or as a string around it), boolean to bool.
//
// Seeds are in testdata/fuzz/FuzzPrepareArgs.
func FuzzPrepareArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, spec string, args []byte) {
		params := parseParamSpec(spec)
		var doc any
		if len(args) > 0 {
			var err error
			if doc, err = decodeNumbers(args); err != nil {
				return
			}
		}
		var before any
		if len(args) > 0 {
			before, _ = decodeNumbers(args)
		}
		paramsBefore := slices.Clone(params)

		got, err := PrepareArgs(params, doc)
		if !reflect.DeepEqual(doc, before) {
			t.Fatalf("PrepareArgs modified the arguments %s", args)
		}
		if !reflect.DeepEqual(params, paramsBefore) {
			t.Fatalf("PrepareArgs modified the parameters %+v", paramsBefore)
		}
		if err != nil {
			var e *unit.Error
			if !errors.As(err, &e) || e.Kind != unit.Invalid {
				t.Fatalf("PrepareArgs(%+v, %s) = %v, want an Invalid *unit.Error", params, args, err)
			}
			if len(e.Fields) == 0 {
				t.Fatalf("PrepareArgs(%+v, %s) = %v, naming no field", params, args, err)
			}
			// Without parameters, the only refusal is a number no float64
			// holds, which encoding/json refuses to decode as one.
			var floats any
			if len(params) == 0 && (len(args) == 0 || json.Valid(args) && json.Unmarshal(args, &floats) == nil) {
				t.Fatalf("PrepareArgs(no parameters, %s) = %v, but every number is in range", args, err)
			}
			for path := range e.Fields {
				if len(params) > 0 && path != "args" && !slices.ContainsFunc(params, func(p RequestParameter) bool { return path == "args."+p.Name }) {
					t.Fatalf("PrepareArgs(%+v, %s) = %v: %q is not a declared parameter", params, args, err, path)
				}
			}
			if got != nil {
				t.Fatalf("PrepareArgs(%+v, %s) = %v with a result %#v", params, args, err, got)
			}
			return
		}

		if len(params) == 0 {
			var floats any
			if len(args) > 0 && json.Valid(args) && json.Unmarshal(args, &floats) != nil {
				t.Fatalf("PrepareArgs(no parameters, %s) passed a number out of range", args)
			}
			want := doc
			if want == nil {
				want = map[string]any{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("PrepareArgs(no parameters, %s) = %#v, want the arguments", args, got)
			}
			return
		}
		obj, ok := got.(map[string]any)
		if !ok {
			t.Fatalf("PrepareArgs(%+v, %s) = %#v, not an object", params, args, got)
		}
		// Every declared parameter present is there, cast.
		in, _ := doc.(map[string]any)
		for _, p := range params {
			path := strings.Split(p.Name, ".")
			src, found := lookupPath(in, path)
			v, present := lookupPath(obj, path)
			if !found || src == nil {
				if present {
					t.Fatalf("PrepareArgs(%+v, %s): %q is absent but the result has %#v", params, args, p.Name, v)
				}
				if !p.Optional {
					t.Fatalf("PrepareArgs(%+v, %s): required %q is absent but there is no error", params, args, p.Name)
				}
				continue
			}
			if !present {
				t.Fatalf("PrepareArgs(%+v, %s): %q = %#v is not in the result %#v", params, args, p.Name, src, got)
			}
			checkCast(t, p, src, v)
		}
		// Nothing else is: every leaf is a declared name, every object on
		// the way was made for one.
		var walk func(prefix string, m map[string]any)
		walk = func(prefix string, m map[string]any) {
			for k, v := range m {
				name := prefix + k
				if slices.ContainsFunc(params, func(p RequestParameter) bool { return p.Name == name }) {
					continue
				}
				sub, ok := v.(map[string]any)
				if !ok || !slices.ContainsFunc(params, func(p RequestParameter) bool { return strings.HasPrefix(p.Name, name+".") }) {
					t.Fatalf("PrepareArgs(%+v, %s) = %#v: %q is not a declared parameter", params, args, got, name)
				}
				walk(name+".", sub)
			}
		}
		walk("", obj)
	})
}

// jsonNumberGrammar is RFC 8259's number.
var jsonNumberGrammar = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// checkCast checks that v is src cast to p's type without loss.
func checkCast(t *testing.T, p RequestParameter, src, v any) {
	t.Helper()
	switch p.Type {
	case TypeString:
		s, ok := v.(string)
		var want string
		switch x := src.(type) {
		case string:
			want = x
		case json.Number:
			want = string(x)
		case bool:
			want = strconv.FormatBool(x)
		default:
			t.Fatalf("%q: %#v cast to string", p.Name, src)
		}
		if !ok || s != want {
			t.Fatalf("%q: %#v cast to string is %#v, want %q", p.Name, src, v, want)
		}
	case TypeNumber:
		n, ok := v.(json.Number)
		if !ok || !jsonNumberGrammar.MatchString(string(n)) {
			t.Fatalf("%q: %#v cast to number is %#v, not a JSON number", p.Name, src, v)
		}
		if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(f, 0) {
			t.Fatalf("%q: %#v cast to number is %s, out of a number's range", p.Name, src, n)
		}
		var want string
		switch x := src.(type) {
		case json.Number:
			want = string(x)
		case string:
			want = strings.TrimSpace(x)
		default:
			t.Fatalf("%q: %#v cast to number", p.Name, src)
		}
		if string(n) != want {
			t.Fatalf("%q: %#v cast to number is %s, want %s", p.Name, src, n, want)
		}
	case TypeBoolean:
		b, ok := v.(bool)
		var want bool
		switch x := src.(type) {
		case bool:
			want = x
		case string:
			s := strings.ToLower(strings.TrimSpace(x))
			if s != "true" && s != "false" {
				t.Fatalf("%q: %q cast to boolean", p.Name, x)
			}
			want = s == "true"
		default:
			t.Fatalf("%q: %#v cast to boolean", p.Name, src)
		}
		if !ok || b != want {
			t.Fatalf("%q: %#v cast to boolean is %#v, want %v", p.Name, src, v, want)
		}
	default:
		t.Fatalf("%q of type %q accepted %#v as %#v", p.Name, p.Type, src, v)
	}
}

// parseParamSpec reads FuzzPrepareArgs's parameters: one a line,
// "name:type" or "name:type?"; a line without a colon is a name of type
// string.
func parseParamSpec(spec string) []RequestParameter {
	var params []RequestParameter
	for _, line := range strings.Split(spec, "\n") {
		if line == "" {
			continue
		}
		p := RequestParameter{Name: line, Type: TypeString}
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			p.Name, p.Type = line[:i], line[i+1:]
		}
		if t, ok := strings.CutSuffix(p.Type, "?"); ok {
			p.Type, p.Optional = t, true
		}
		params = append(params, p)
	}
	return params
}

// TestPrepareArgsNumberThenJunk: a string is cast to a number only when
// it is one number and nothing else. A number followed by "]" or "}" used
// to be cast to the number, dropping the rest ("0]" became 0; found by
// FuzzPrepareArgs).
func TestPrepareArgsNumberThenJunk(t *testing.T) {
	params := []RequestParameter{{Name: "n", Type: TypeNumber}}
	for _, s := range []string{"0]", "1}", "12]]]x", "1 ]", " 2 }", "3,", "4 5", "[6]"} {
		_, err := PrepareArgs(params, map[string]any{"n": s})
		if e, ok := err.(*unit.Error); !ok || e.Kind != unit.Invalid || e.Fields["args.n"] == nil {
			t.Errorf("PrepareArgs(n = %q) = %v, want Invalid on args.n", s, err)
		}
	}
	for s, want := range map[string]json.Number{" 7 ": "7", "-0.5e+3": "-0.5e+3", "\t8\n": "8"} {
		got, err := PrepareArgs(params, map[string]any{"n": s})
		if err != nil || !reflect.DeepEqual(got, map[string]any{"n": want}) {
			t.Errorf("PrepareArgs(n = %q) = %v, %v, want %s", s, got, err, want)
		}
	}
}

// decodeNumbers decodes one JSON value keeping numbers exact
// (json.Number), as the Vault decodes the arguments it is given.
func decodeNumbers(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, errors.New("not one JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
