package expr_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/expr"
)

// Seeds are in testdata/fuzz/FuzzParse and testdata/fuzz/FuzzEval.

// FuzzParse checks that Parse never panics, reports every failure as an
// *Error inside the source, and that what it accepts evaluates without
// panicking.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := expr.Parse(src)
		if err != nil {
			var xe *expr.Error
			if !errors.As(err, &xe) {
				t.Fatalf("Parse(%q) error %T is not *Error", src, err)
			}
			if xe.Pos < 0 || xe.Pos > len(src) {
				t.Fatalf("Parse(%q) = %v, position outside the source", src, xe)
			}
			return
		}
		if tmpl.Source() != src {
			t.Fatalf("Parse(%q).Source() = %q", src, tmpl.Source())
		}
		if got, want := tmpl.HasExpressions(), strings.Contains(src, "{{"); got != want {
			t.Fatalf("Parse(%q).HasExpressions() = %v, want %v", src, got, want)
		}
		if n := len(tmpl.Roots()); n > strings.Count(src, "{{") {
			t.Fatalf("Parse(%q).Roots() has %d roots for %d {{", src, n, strings.Count(src, "{{"))
		}
		checkEval(t, tmpl, sample())
	})
}

// FuzzEval evaluates templates over the sample data plus "input": value
// decoded as JSON, or value itself if it is not JSON.
func FuzzEval(f *testing.F) {
	f.Fuzz(func(t *testing.T, src, value string) {
		tmpl, err := expr.Parse(src)
		if err != nil {
			return
		}
		vars := sample()
		dec := json.NewDecoder(strings.NewReader(value))
		dec.UseNumber()
		var input any
		if err := dec.Decode(&input); err != nil {
			input = value
		}
		vars["input"] = input
		checkEval(t, tmpl, vars)
		checkEvalRand(t, tmpl, vars)
		if !reflect.DeepEqual(vars["data"], sample()["data"]) {
			t.Fatalf("Eval(%q) modified the data it read", src)
		}
	})
}

// checkEval evaluates tmpl twice and checks the result: the same both
// times, an *Error at an expression's "{{", or a value of a JSON type
// that is a string unless the template is a lone expression.
func checkEval(t *testing.T, tmpl *expr.Template, vars map[string]any) {
	t.Helper()
	src := tmpl.Source()
	v, err := tmpl.Eval(expr.Vars(vars))
	v2, err2 := tmpl.Eval(expr.Vars(vars))
	if !reflect.DeepEqual(v, v2) || !reflect.DeepEqual(err, err2) {
		t.Fatalf("Eval(%q) gave %#v, %v then %#v, %v", src, v, err, v2, err2)
	}
	if err != nil {
		var xe *expr.Error
		if !errors.As(err, &xe) {
			t.Fatalf("Eval(%q) error %T is not *Error", src, err)
		}
		if !strings.HasPrefix(src[xe.Pos:], "{{") {
			t.Fatalf("Eval(%q) = %v, position is not at a {{", src, xe)
		}
		return
	}
	lone := strings.HasPrefix(src, "{{") && strings.HasSuffix(src, "}}")
	if _, ok := v.(string); !ok && !lone {
		t.Fatalf("Eval(%q) = %#v, want a string", src, v)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("Eval(%q) = %#v, which has no JSON form: %v", src, v, err)
	}
}

// countingReader gives the bytes 0, 1, 2, ... : the same sequence for
// each new one.
type countingReader struct{ next byte }

func (c *countingReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = c.next
		c.next++
	}
	return len(b), nil
}

// checkEvalRand evaluates tmpl with randomness: the same randomness gives
// the same result, errors are *Error at a "{{", and a template without an
// alias filter gives what Eval gives.
func checkEvalRand(t *testing.T, tmpl *expr.Template, vars map[string]any) {
	t.Helper()
	src := tmpl.Source()
	v, err := tmpl.EvalRand(expr.Vars(vars), &countingReader{})
	v2, err2 := tmpl.EvalRand(expr.Vars(vars), &countingReader{})
	if !reflect.DeepEqual(v, v2) || !reflect.DeepEqual(err, err2) {
		t.Fatalf("EvalRand(%q) gave %#v, %v then %#v, %v with the same randomness", src, v, err, v2, err2)
	}
	if err != nil {
		var xe *expr.Error
		if !errors.As(err, &xe) || !strings.HasPrefix(src[xe.Pos:], "{{") {
			t.Fatalf("EvalRand(%q) = %v, want an *Error at a {{", src, err)
		}
	}
	if !tmpl.Random() {
		ve, erre := tmpl.Eval(expr.Vars(vars))
		if !reflect.DeepEqual(v, ve) || !reflect.DeepEqual(err, erre) {
			t.Fatalf("EvalRand(%q) = %#v, %v; Eval gave %#v, %v", src, v, err, ve, erre)
		}
	}
}
