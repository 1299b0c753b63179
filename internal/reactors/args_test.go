package reactors

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestPrepareArgs(t *testing.T) {
	card := map[string]any{"number": "4242424242424242", "expiration_month": json.Number("12"), "expiration_year": json.Number("2031"), "cvc": "123"}
	p := func(name, typ string, optional bool) RequestParameter {
		return RequestParameter{Name: name, Type: typ, Optional: optional}
	}
	tests := []struct {
		rule   string
		params []RequestParameter
		args   any
		want   any
		field  string
	}{
		{"1: no parameters, anything passes", nil, map[string]any{"x": []any{json.Number("1")}, "y": nil}, map[string]any{"x": []any{json.Number("1")}, "y": nil}, ""},
		{"1: no parameters, no args", nil, nil, map[string]any{}, ""},
		{"2: exact name", []RequestParameter{p("amount", "number", false)}, map[string]any{"amount": json.Number("5")}, map[string]any{"amount": json.Number("5")}, ""},
		{"2: names are case-sensitive", []RequestParameter{p("amount", "number", false)}, map[string]any{"Amount": json.Number("5")}, nil, "args.amount"},
		{"3: dotted names reach nested objects", []RequestParameter{p("a.b.c", "string", false)}, map[string]any{"a": map[string]any{"b": map[string]any{"c": "deep"}}}, map[string]any{"a": map[string]any{"b": map[string]any{"c": "deep"}}}, ""},
		{"4: undeclared arguments are removed", []RequestParameter{p("a.keep", "string", false)}, map[string]any{"a": map[string]any{"keep": "k", "drop": "d"}, "other": json.Number("1")}, map[string]any{"a": map[string]any{"keep": "k"}}, ""},
		{"5: missing required", []RequestParameter{p("x", "string", false)}, map[string]any{}, nil, "args.x"},
		{"5: null counts as missing", []RequestParameter{p("x", "string", false)}, map[string]any{"x": nil}, nil, "args.x"},
		{"5: missing optional is fine", []RequestParameter{p("x", "string", true)}, map[string]any{}, map[string]any{}, ""},
		{"5: no args at all", []RequestParameter{p("x", "string", false)}, nil, nil, "args.x"},
		{"6: numeric string to number", []RequestParameter{p("n", "number", false)}, map[string]any{"n": " 4.5e1 "}, map[string]any{"n": json.Number("4.5e1")}, ""},
		{"6: hex string is not a number", []RequestParameter{p("n", "number", false)}, map[string]any{"n": "0x10"}, nil, "args.n"},
		{"6: NaN is not a number", []RequestParameter{p("n", "number", false)}, map[string]any{"n": "NaN"}, nil, "args.n"},
		{"6: boolean is not a number", []RequestParameter{p("n", "number", false)}, map[string]any{"n": true}, nil, "args.n"},
		{"6: \"true\" to boolean", []RequestParameter{p("b", "boolean", false)}, map[string]any{"b": "TRUE"}, map[string]any{"b": true}, ""},
		{"6: \"yes\" is not a boolean", []RequestParameter{p("b", "boolean", false)}, map[string]any{"b": "yes"}, nil, "args.b"},
		{"6: number to string", []RequestParameter{p("s", "string", false)}, map[string]any{"s": json.Number("12")}, map[string]any{"s": "12"}, ""},
		{"6: object is not a string", []RequestParameter{p("s", "string", false)}, map[string]any{"s": map[string]any{}}, nil, "args.s"},
		{"7: one card token supplies several parameters", []RequestParameter{p("card.number", "string", false), p("card.expiration_month", "number", false), p("card.expiration_year", "string", false)},
			map[string]any{"card": card},
			map[string]any{"card": map[string]any{"number": "4242424242424242", "expiration_month": json.Number("12"), "expiration_year": "2031"}}, ""},
		{"args must be an object when parameters are declared", []RequestParameter{p("x", "string", true)}, []any{"x"}, nil, "args"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := PrepareArgs(tt.params, tt.args)
			if tt.field != "" {
				e, ok := err.(*unit.Error)
				if !ok || e.Kind != unit.Invalid || e.Fields[tt.field] == nil {
					t.Fatalf("err = %v, want Invalid on %s", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}
