package expr

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var sample = map[string]any{
	"data": map[string]any{
		"number":           "4242424242424242",
		"expiration_month": json.Number("3"),
		"expiration_year":  json.Number("2031"),
		"name":             "Ada Lovelace",
		"items":            []any{"a", "b", "c"},
		"nested":           map[string]any{"ok": true},
		"json":             `{"x": {"y": [1, 2]}}`,
		"ünï":              "ünïcødé",
	},
}

func eval(t *testing.T, src string) (any, error) {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return tmpl.Eval(Vars(sample))
}

func TestEval(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		{"plain text", "plain text"},
		{"{{ data.number }}", "4242424242424242"},
		{"{{data.expiration_month}}", json.Number("3")},
		{"{{ data.nested }}", map[string]any{"ok": true}},
		{"{{ data.items.1 }}", "b"},
		{"{{ data.missing }}", nil},
		{"{{ data.items.9 }}", nil},
		{"n={{ data.nested }}", `n={"ok":true}`},
		{"{{ data.expiration_month }}/{{ data.expiration_year }}", "3/2031"},
		{"x {{ data.missing }} y", "x  y"},
		{"{{ 'literal' }}", "literal"},
		{`{{ "a|b}}" }}`, "a|b}}"},
		{"}} stray", "}} stray"},
		{"{{ data.number | last4 }}", "4242"},
		{"{{ data.number | reveal_last: 4 }}", "XXXXXXXXXXXX4242"},
		{"{{ data.number | reveal_last: 4, '*' }}", "************4242"},
		{"{{ data.number | reveal: 6, 4 }}", "424242XXXXXX4242"},
		{"{{ 'abc' | reveal: 2, 2 }}", "abc"},
		{"{{ data.number | slice: 0, 6 }}", "424242"},
		{"{{ data.number | slice: -4, 4 }}", "4242"},
		{"{{ data.number | slice: 99 }}", ""},
		{"{{ data.items | slice: 1, 5 }}", []any{"b", "c"}},
		{"{{ '7' | pad_left: 3, '0' }}", "007"},
		{"{{ '7' | pad_right: 3 }}", "7  "},
		{"{{ 'long' | pad_left: 2 }}", "long"},
		{"{{ data.nested | stringify }}", `{"ok":true}`},
		{"{{ data.missing | stringify }}", ""},
		{"{{ data.json | json: '$.x.y[1]' }}", json.Number("2")},
		{"{{ data | json: \"$['name']\" }}", "Ada Lovelace"},
		{"{{ data.name | upcase }}", "ADA LOVELACE"},
		{"{{ data.name | downcase | replace: 'a', 'A' }}", "AdA lovelAce"},
		{"{{ data.name | remove: ' ' }}", "AdaLovelace"},
		{"{{ data.name | split: ' ' }}", []any{"Ada", "Lovelace"}},
		{"{{ data.number | card_bin }}", "424242"},
		{"{{ data.number | card_mask }}", "424242XXXXXX4242"},
		{"{{ data | card_exp }}", "03/31"},
		{"{{ data | card_exp: 'MM-YYYY' }}", "03-2031"},
		{"{{ data.expiration_year | to_string }}", "2031"},
		{"{{ '12.50' | to_number }}", json.Number("12.50")},
		{"{{ 'true' | to_boolean }}", true},
		{"{{ 'abc' | to_base64 }}", "YWJj"},
		{"{{ 'abc' | to_base16 }}", "616263"},
		{"{{ 'abc' | hmac: 'sha256', 'k' }}", hmacHex("sha256", "k", "abc")},
		{"{{ data.ünï | last4 }}", "cødé"},
		{"{{ nil | last4 }}", ""},
	}
	for _, tc := range tests {
		got, err := eval(t, tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.src, diff)
		}
	}
}

func hmacHex(alg, key, msg string) string {
	v, _ := hmacFilter(msg, []arg{{s: alg}, {s: key}})
	return v.(string)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src string
		pos int
	}{
		{"{{ data", 0},
		{"ab {{ data", 3},
		{"{{ }}", 3},
		{"{{ data | nope }}", 10},
		{"{{ data | reveal_last }}", 10},
		{"{{ data | reveal_last: 'x' }}", 10},
		{"{{ data | reveal_last: 4, 'xy' }}", 10},
		{"{{ data | slice: 1, 2, 3 }}", 10},
		{"{{ data | hmac: 'md5', 'k' }}", 10},
		{"{{ data | json: 'x' }}", 10},
		{"{{ data | pad_left: 100000 }}", 10},
		{"{{ data | last4: }}", 16},
		{"{{ data | slice: 1, }}", 19},
		{"{{ data | slice: one }}", 17},
		{"{{ 'unterminated }}", 0},
		{"{{ data | }}", 10},
		{"{{ 'a' 'b' }}", 3},
	}
	for _, tc := range tests {
		_, err := Parse(tc.src)
		var xe *Error
		if !errors.As(err, &xe) {
			t.Errorf("Parse(%q) = %v, want *Error", tc.src, err)
			continue
		}
		if xe.Pos != tc.pos {
			t.Errorf("Parse(%q) error at %d (%v), want %d", tc.src, xe.Pos, xe, tc.pos)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for _, src := range []string{
		"{{ data | json: '$.nope' }}",
		"{{ data.name | card_bin }}",
		"{{ '123' | card_mask }}",
		"{{ data.name | card_exp }}",
		"{{ 'x' | to_number }}",
		"{{ 'yes' | to_boolean }}",
		"{{ data..x }}",
		"{{ data x }}",
	} {
		_, err := eval(t, src)
		var xe *Error
		if !errors.As(err, &xe) {
			t.Errorf("Eval(%q) = %v, want *Error", src, err)
		}
	}
}

func TestRoots(t *testing.T) {
	tmpl, err := Parse("a {{ 0190-x | last4 }} b {{ 'lit' }} {{data.x}}")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0190-x", "data.x"}, tmpl.Roots()); diff != "" {
		t.Errorf("Roots (-want +got):\n%s", diff)
	}
	if !tmpl.HasExpressions() {
		t.Errorf("HasExpressions = false")
	}
	plain, _ := Parse("no {braces}")
	if plain.HasExpressions() || plain.Source() != "no {braces}" {
		t.Errorf("plain template: %v %q", plain.HasExpressions(), plain.Source())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"{{ data }}", "{{ data.number | reveal_last: 4, '*' }}", "x {{ 'a' }} y", "{{", "}}{{}}",
		"{{ data | json: '$.a[0][\"b\"]' }}", "{{ a | slice: -1, 2 | pad_left: 9, '0' }}", "{{ data | card_exp: 'MM/YYYY' }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Parse(src)
		if err != nil {
			var xe *Error
			if !errors.As(err, &xe) {
				t.Fatalf("Parse error %T is not *Error", err)
			}
			return
		}
		if _, err := tmpl.Eval(Vars(sample)); err != nil {
			var xe *Error
			if !errors.As(err, &xe) {
				t.Fatalf("Eval error %T is not *Error", err)
			}
		}
	})
}

func BenchmarkEvalMask(b *testing.B) {
	tmpl, _ := Parse("{{ data.number | reveal_last: 4 }}")
	vars := Vars(sample)
	for b.Loop() {
		tmpl.Eval(vars)
	}
}
