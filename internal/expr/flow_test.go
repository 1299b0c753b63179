package expr

import (
	"encoding/json"
	"testing"
)

// shown renders what a template's result shows of a text variable v, one
// character per character of it: 'e' shown exactly, 'c' in clear (some
// function of it with no secret between), '.' nothing.
func shown(t *testing.T, src string, vars map[string]any, path string, n int) string {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	in := Label(vars)
	f := tmpl.Flow(in)
	out := make([]byte, n)
	for i := range n {
		c := in.Chars(path, i, i+1)
		switch {
		case !f.Exact.Intersect(c).Empty():
			out[i] = 'e'
		case !f.Clear.Intersect(c).Empty():
			out[i] = 'c'
		default:
			out[i] = '.'
		}
	}
	return string(out)
}

// TestFlowFilters: what each filter shows of a card number (16 digits:
// BIN of 8) and of a plain text.
func TestFlowFilters(t *testing.T) {
	card := map[string]any{"data": map[string]any{"number": "5105105105105100",
		"expiration_month": json.Number("12"), "expiration_year": json.Number("2031")}}
	for _, tc := range []struct{ src, want string }{
		{`{{ data.number }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data.number | last4 }}`, "............eeee"},
		{`{{ data.number | reveal_last: 4 }}`, "............eeee"},
		{`{{ data.number | reveal: 6, 4 }}`, "eeeeee......eeee"},
		{`{{ data.number | reveal: 10, 10 }}`, "eeeeeeeeeeeeeeee"}, // overlapping: unchanged
		{`{{ data.number | slice: 3, 4 }}`, "...eeee........."},
		{`{{ data.number | slice: -2 }}`, "..............e."},
		{`{{ data.number | pad_left: 20, '0' }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data.number | stringify }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data | json: '$.number' | last4 }}`, "............eeee"},
		{`{{ data.number | upcase }}`, "eeeeeeeeeeeeeeee"}, // digits do not change case
		{`{{ data.number | replace: 'X', '*' }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data.number | reveal_last: 4 | replace: 'X', '*' }}`, "............eeee"},
		{`{{ data.number | replace: '5', '-' }}`, "cccccccccccccccc"},
		{`{{ data.number | replace: '5', '55' | last4 }}`, "cccccccccccccccc"}, // the length depends on the data
		{`{{ data.number | remove: '-' }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data.number | split: '' | slice: 2 | stringify }}`, "..e............."},
		{`{{ data.number | card_bin }}`, "eeeeee.........."},
		{`{{ data.number | card_mask }}`, "eeeeee......eeee"},
		{`{{ data | card_exp }}`, "................"},
		{`{{ data.number | to_number }}`, "eeeeeeeeeeeeeeee"},
		{`{{ data.number | slice: 0, 1 | to_boolean }}`, "c..............."},
		{`{{ data.number | last4 | hmac: 'sha256', 'k' }}`, "............cccc"},
		{`{{ data.number | slice: 0, 3 | to_base64 }}`, "ccc............."},
		{`{{ data.number | slice: 0, 2 | to_base16 }}`, "cc.............."},
		{`{{ data.number | alias_card }}`, "................"},
		{`{{ data.number | alias_card: true, true }}`, "eeeeeeee....eeee"},
		{`{{ data.number | alias_preserve_format: 2, 1 }}`, "ee.............e"},
		{`{{ data.number | alias_preserve_length: 0, 4 }}`, "............eeee"},
		{`{{ data.number | replace: '1', 'a' | alias_preserve_format }}`, "cccccccccccccccc"},
		{`{{ data.number | fpe: 'digits' }}`, "................"},
		{`{{ data.number | replace: '5', '-' | fpe: 'digits' }}`, "cccccccccccccccc"},
		{`{{ data.number | fpe: 'card_bin_last4' }}`, "eeeeee......eeee"},
		{`{{ data.number | fpe: 'card_bin' }}`, "eeeeee.........."},
		{`{{ data.number | slice: 3, 13 | fpe: 'card_bin' }}`, "...eeeeee......."},
		{`{{ data.number | fpe_tweaked: 'card', 'data.expiration_year' }}`, "................"},
		// Fewer than a million values of the data enciphered: a codebook.
		{`{{ data.number | slice: 8, 1 | pad_left: 6, '0' | fpe: 'digits' }}`, "........c......."},
		{`{{ data.number | slice: 10, 5 | pad_left: 6, '0' | fpe: 'digits' }}`, "..........ccccc."},
		{`{{ data.number | slice: 10, 6 | fpe: 'digits' }}`, "................"},
		{`{{ data.number | slice: 0, 2 | alias_preserve_format | pad_left: 6, '0' | fpe: 'digits' }}`, "................"},
	} {
		if got := shown(t, tc.src, card, "data.number", 16); got != tc.want {
			t.Errorf("%s shows %s of the number, want %s", tc.src, got, tc.want)
		}
	}

	// A text's shape (length, classes, spaces and dashes) is public; its
	// characters are not.
	ssn := map[string]any{"data": "123-45-6789"}
	for _, tc := range []struct{ src, want string }{
		{`{{ data | alias_preserve_format }}`, "..........."},
		{`{{ data | alias_preserve_format: 0, 4 }}`, ".......eeee"},
		{`{{ data | fpe: 'digits' }}`, "..........."},
		{`{{ data | stringify | alias_preserve_length }}`, "..........."},
		{`{{ data | alias_preserve_length }}_{{ data }}`, "eee.ee.eeee"}, // dashes are shape
		{`{{ data | upcase | alias_preserve_format }}`, "..........."},
	} {
		if got := shown(t, tc.src, ssn, "data", 11); got != tc.want {
			t.Errorf("%s shows %s of the ssn, want %s", tc.src, got, tc.want)
		}
	}
	name := map[string]any{"data": "Ada L. Lovelace"}
	for _, tc := range []struct{ src, want string }{
		{`{{ data | alias_preserve_format }}`, ".....c........."}, // "." is not a letter: it may stay
		{`{{ data | replace: 'a', 'A' | alias_preserve_format }}`, ".cc..c..ccccccc"},
		{`{{ data | downcase | fpe: 'base36' }}`, ".....c........."},
	} {
		if got := shown(t, tc.src, name, "data", 15); got != tc.want {
			t.Errorf("%s shows %s of the name, want %s", tc.src, got, tc.want)
		}
	}
}

// TestEveryFilterHasAFlowRule: a filter added without a rule would show
// everything it reads; the table is kept full on purpose.
func TestEveryFilterHasAFlowRule(t *testing.T) {
	for name, spec := range filters {
		if spec.flow == nil {
			t.Errorf("filter %s has no flow rule", name)
		}
	}
}

// TestFlowUnknownFilterShowsAll: an expression through a filter with no
// rule shows all it reads.
func TestFlowUnknownFilterShowsAll(t *testing.T) {
	tmpl, err := Parse(`{{ data | reveal_last: 2 | upcase }}`)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.parts[0].e.filters[1].spec = &filterSpec{text: upcase}
	in := Label(map[string]any{"data": "abcdef"})
	if got := tmpl.Flow(in).Clear.Intersect(in.Chars("data", 0, 6)); got.Intersect(in.Chars("data", 4, 6)).Empty() || !got.Intersect(in.Chars("data", 0, 4)).Empty() {
		t.Errorf("clear = %v, want the last two (all reveal_last passes on)", got)
	}
}

// TestFlowOnly: a template over in.Only("data") reads no other variable,
// and its sources compare with those of in.
func TestFlowOnly(t *testing.T) {
	in := Label(map[string]any{"data": "abc", "metadata": map[string]any{"k": "xyz"}})
	tmpl, err := Parse(`{{ data }}{{ metadata.k }}`)
	if err != nil {
		t.Fatal(err)
	}
	all, only := tmpl.Flow(in), tmpl.Flow(in.Only("data"))
	if all.Exact.Intersect(in.Chars("metadata.k", 0, 3)).Empty() || all.Exact.Intersect(in.Chars("data", 0, 3)).Empty() {
		t.Errorf("over in: exact = %v, want data and metadata.k", all.Exact)
	}
	if !only.Exact.Intersect(in.Chars("metadata.k", 0, 3)).Empty() || only.Exact.Intersect(in.Chars("data", 0, 3)).Empty() {
		t.Errorf("over in.Only(data): exact = %v, want data only", only.Exact)
	}
}
