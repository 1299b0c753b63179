package aliases

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestCardShaped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s      string
		digits int
		shaped bool
	}{
		{"4242424242424242", 16, true},
		{"4242 4242-4242 4242", 16, true},
		{" 4242", 0, false},
		{"4242-", 0, false},
		{"42x42", 0, false},
		{"", 0, false},
	} {
		if n, ok := cardShaped(tc.s); n != tc.digits || ok != tc.shaped {
			t.Errorf("cardShaped(%q) = %d, %v; want %d, %v", tc.s, n, ok, tc.digits, tc.shaped)
		}
	}
}

func TestCheckDisplay(t *testing.T) {
	t.Parallel()
	card := map[string]any{"number": "4242424242424242"}
	for _, tc := range []struct {
		name     string
		typ      string
		data     any
		mask     any
		id       string // "" for a literal id
		field    string // where the problem is, "" for none
		contains string
	}{
		{"card, last four", unit.TypeCard, card, map[string]any{"number": "{{ data.number | reveal_last: 4 }}"}, "", "", ""},
		{"card, whole number", unit.TypeCard, card, map[string]any{"number": "{{ data.number }}"}, "", "mask", "beyond its BIN (the first 8)"},
		{"card, alias keeping BIN and last four", unit.TypeCard, card, map[string]any{"number": "{{ data.number | reveal_last: 4 }}"},
			"{{ data.number | alias_card: true, true }}", "", ""},
		{"card, id copying the number", unit.TypeCard, card, nil, "x{{ data.number | upcase }}", "id", "beyond its BIN"},
		{"card-shaped token, whole number", unit.TypeToken, "4242 4242 4242", "{{ data }}", "", "mask", "the first 6"},
		{"token, no mask, id showing data", unit.TypeToken, "abcdef", nil, "{{ data | alias_preserve_length: 1, 0 }}", "id", "does not"},
		{"token, id showing what the mask shows", unit.TypeToken, "abcdef", "{{ data | slice: 0, 1 }}",
			"{{ data | alias_preserve_length: 1, 0 }}", "", ""},
		{"token, no mask, id from metadata", unit.TypeToken, "abcdef", nil, "{{ data | alias_preserve_length }}-{{ metadata.region }}", "id", "does not"},
		{"token, no id", unit.TypeToken, "abcdef", "{{ data }}", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tmpl *expr.Template
			if tc.id != "" {
				tmpl = mustParse(tc.id)
			}
			fe := unit.FieldErrors{}
			testRules.CheckDisplay(tc.typ, tc.data, map[string]string{"region": "eu"}, tc.mask, tmpl, "mask", "id", fe)
			if tc.field == "" {
				if len(fe) != 0 {
					t.Errorf("CheckDisplay: %v, want no problem", fe)
				}
				return
			}
			if got := fieldErr(fe, tc.field); !strings.Contains(got, tc.contains) {
				t.Errorf("CheckDisplay: %v, want a problem at %s with %q", fe, tc.field, tc.contains)
			}
		})
	}
}

func TestCheckMaskKeepsID(t *testing.T) {
	t.Parallel()
	stored := []byte(`"abcdef"`)
	oldMask := []byte(`"{{ data | slice: 0, 2 }}"`)
	for _, tc := range []struct {
		name    string
		aliasID bool
		typ     string
		data    []byte
		newMask any
		refused bool
	}{
		{"same mask", true, unit.TypeToken, stored, "{{ data | slice: 0, 2 }}", false},
		{"a mask showing more", true, unit.TypeToken, stored, "{{ data }}", false},
		{"a mask showing less", true, unit.TypeToken, stored, "{{ data | slice: 0, 1 }}", true},
		{"no mask", true, unit.TypeToken, stored, nil, true},
		{"a literal id", false, unit.TypeToken, stored, nil, false},
		{"a card number", true, unit.TypeToken, []byte(`"4242424242424242"`), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := unit.FieldErrors{}
			testRules.CheckMaskKeepsID(tc.aliasID, tc.typ, tc.data, oldMask, tc.newMask, fe)
			if got := fieldErr(fe, "mask") != ""; got != tc.refused {
				t.Errorf("CheckMaskKeepsID: %v, want refused %v", fe, tc.refused)
			}
		})
	}
}
