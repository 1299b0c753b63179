package expr_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/expr"
)

// sample is the data the Eval tests and fuzz targets evaluate against.
func sample() map[string]any {
	return map[string]any{
		"data": map[string]any{
			"number":           pan,
			"expiration_month": json.Number("3"),
			"expiration_year":  json.Number("2031"),
			"amount":           12.5,
			"big":              1e21,
			"active":           true,
			"name":             "Ada Lovelace",
			"items":            []any{"a", "b", map[string]any{"c": "d"}},
			"nested":           map[string]any{"ok": true, "none": nil},
			"json":             `{"x": {"y": [1, 2]}}`,
			"html":             "<&>",
			"ünï":              "ünïcødé",
		},
	}
}

func TestEval(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want any
	}{
		// Exactly one expression: the value with its JSON type.
		{"string", "{{ data.number }}", pan},
		{"json.Number", "{{data.expiration_month}}", json.Number("3")},
		{"float", "{{ data.amount }}", 12.5},
		{"bool", "{{ data.active }}", true},
		{"object", "{{ data.nested }}", map[string]any{"ok": true, "none": nil}},
		{"array", "{{ data.items | slice: 0, 2 }}", []any{"a", "b"}},
		{"missing", "{{ data.missing }}", nil},
		{"present null", "{{ data.nested.none }}", nil},
		{"literal", "{{ 'literal' }}", "literal"},
		{"literal with braces and pipe", `{{ "a|b}}" }}`, "a|b}}"},
		{"filter makes a number", "{{ '12' | to_number }}", json.Number("12")},
		{"filter makes a bool", "{{ 'true' | to_boolean }}", true},
		{"filter makes an array", "{{ data.name | split: ' ' }}", []any{"Ada", "Lovelace"}},
		{"json filter object", "{{ data.json | json: '$.x' }}", map[string]any{"y": []any{json.Number("1"), json.Number("2")}}},

		// Anything else: a string.
		{"empty template", "", ""},
		{"plain text", "plain text", "plain text"},
		{"stray closing", "}} stray", "}} stray"},
		{"text before", "n={{ data.expiration_month }}", "n=3"},
		{"text after", "{{ data.expiration_month }} ", "3 "},
		{"two expressions", "{{ data.expiration_month }}{{ data.expiration_year }}", "32031"},
		{"separated", "{{ data.expiration_month }}/{{ data.expiration_year }}", "3/2031"},
		{"pipe between", "{{ data.number | last4 }}|{{ data.name }}", "4242|Ada Lovelace"},
		{"object in text", "n={{ data.nested }}", `n={"none":null,"ok":true}`},
		{"array in text", "{{ data.items }}!", `["a","b",{"c":"d"}]!`},
		{"html escaped as encoding/json does", "{{ data.nested.x }}{{ data.items | slice: 0 }}-{{ data.html }}", `["a"]-<&>`},
		{"float in text", "{{ data.amount }} {{ data.big }}", "12.5 1000000000000000000000"},
		{"bool in text", "{{ data.active }}.", "true."},
		{"missing in text", "x {{ data.missing }} y", "x  y"},
		{"unicode path", "{{ data.ünï | last4 }}.", "cødé."},
		{"card mask text", "Card {{ data.number | card_mask }} exp {{ data | card_exp }}", "Card 424242XXXXXX4242 exp 03/31"},
		{"chain", "{{ data.name | downcase | replace: 'a', 'A' | remove: ' ' }}", "AdAlovelAce"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := expr.Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.src, err)
			}
			got, err := tmpl.Eval(expr.Vars(sample()))
			if err != nil {
				t.Fatalf("Eval(%q) = %v", tc.src, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Eval(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string
	}{
		{"json selects nothing", "{{ data | json: '$.nope' }}", 0, "json path $.nope selects nothing"},
		{"at second expression", "ab {{ data.number }} {{ data | json: '$.nope' }}", 21, "selects nothing"},
		{"filter after others", "x{{ data.name | upcase | card_bin }}", 1, "card_bin"},
		{"bad path", "{{ data..x }}", 0, `"data..x" is not a variable path`},
		{"space in path", "- {{ data x }}", 2, "not a variable path"},
		{"bad character in path", "{{ data.a/b }}", 0, "not a variable path"},
		{"quote in path", "{{ data.'x' }}", 0, "not a variable path"},
		{"leading dot", "{{ .data }}", 0, "not a variable path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := expr.Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.src, err)
			}
			got, err := tmpl.Eval(expr.Vars(sample()))
			var xe *expr.Error
			if !errors.As(err, &xe) {
				t.Fatalf("Eval(%q) = %#v, %v, want *Error", tc.src, got, err)
			}
			if xe.Pos != tc.pos || !strings.Contains(xe.Msg, tc.msg) {
				t.Errorf("Eval(%q) = %v, want position %d: ...%s...", tc.src, xe, tc.pos, tc.msg)
			}
		})
	}
}

func TestEvalResolver(t *testing.T) {
	tmpl, err := expr.Parse("id: {{ 0190-a | json: '$.n' }} and {{ 'lit' }} {{ 0190-b }}")
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	got, err := tmpl.Eval(func(root string) (any, error) {
		asked = append(asked, root)
		return map[string]any{"n": root}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `id: 0190-a and lit {"n":"0190-b"}`; got != want {
		t.Errorf("Eval = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"0190-a", "0190-b"}, asked); diff != "" {
		t.Errorf("resolver asked for (-want +got):\n%s", diff)
	}

	// A resolver's error, even an *Error of its own, is reported at the
	// expression.
	for _, rerr := range []error{errors.New("token not loaded"), &expr.Error{Pos: 99, Msg: "token not loaded"}} {
		_, err = tmpl.Eval(func(string) (any, error) { return nil, rerr })
		var xe *expr.Error
		if !errors.As(err, &xe) || xe.Pos != 4 || xe.Msg != "token not loaded" {
			t.Errorf("Eval with failing resolver (%v) = %v, want position 4: token not loaded", rerr, err)
		}
	}

	// A nil resolver serves literal roots only.
	lit, _ := expr.Parse("{{ 'a' | upcase }}")
	if got, err := lit.Eval(nil); err != nil || got != "A" {
		t.Errorf("Eval(nil) of a literal = %v, %v, want A", got, err)
	}
	if _, err := tmpl.Eval(nil); err == nil {
		t.Errorf("Eval(nil) of a raw root = nil error, want *Error")
	}
}

// TestEvalRenderFailure checks that a value without a JSON form is an
// error, not a panic or a silent "".
func TestEvalRenderFailure(t *testing.T) {
	for _, src := range []string{"x{{ v }}", "{{ v | stringify }}", "{{ v | upcase }}"} {
		_, err := evalWith(t, src, map[string]any{"nan": math.NaN()})
		var xe *expr.Error
		if !errors.As(err, &xe) || xe.Pos != strings.Index(src, "{{") {
			t.Errorf("Eval(%q) with NaN inside = %v, want *Error", src, err)
		}
	}
}

// TestEvalWorkLimit checks that templates that would grow a value without
// bound fail instead.
func TestEvalWorkLimit(t *testing.T) {
	small, big := strings.Repeat("a", 4096), strings.Repeat("a", 1<<20)
	tests := []struct {
		name string
		src  string
		in   string
	}{
		{"doubling", "{{ v" + strings.Repeat(" | to_base16", 100) + " }}", small},
		{"replace blowup", "{{ v | replace: 'a', '" + strings.Repeat("b", 60000) + "' }}", small},
		{"replace chain", "{{ v" + strings.Repeat(" | replace: 'a', 'aa'", 100) + " }}", small},
		{"split too many", "{{ v | split: '' }}", big},
		{"split and stringify", "{{ v" + strings.Repeat(" | split: 'a' | stringify", 50) + " }}", small},
		{"many expressions", strings.Repeat("{{ v }}", 17), big},
		{"many filters", strings.Repeat("{{ v | upcase }}", 9), big},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := evalWith(t, tc.src, tc.in)
			var xe *expr.Error
			if !errors.As(err, &xe) {
				t.Fatalf("Eval = %v, want *Error", err)
			}
		})
	}
	// An ordinary large value is fine.
	ok := "{{ v | reveal_last: 4 | to_base64 }} {{ v | card_mask }} {{ v | split: ' ' | slice: 0 }}"
	if _, err := evalWith(t, ok, strings.Repeat("4", 1<<20)); err != nil {
		t.Errorf("Eval(%q) over 1 MiB = %v", ok, err)
	}
}

func TestEvalConcurrent(t *testing.T) {
	tmpl, err := expr.Parse("{{ data.number | reveal_last: 4 }} {{ data | card_exp: 'MM/YYYY' }}")
	if err != nil {
		t.Fatal(err)
	}
	vars := expr.Vars(sample())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				got, err := tmpl.Eval(vars)
				if err != nil || got != "XXXXXXXXXXXX4242 03/2031" {
					t.Errorf("goroutine %d: Eval = %v, %v", i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
