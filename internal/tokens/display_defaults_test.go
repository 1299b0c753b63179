package tokens

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestDefaultMasksKeepTheDisplayRule: the types' default masks keep the
// display rule for every card and bank number shape, so a tokenize that
// uses its type's default mask with a generated or literal id skips the
// per-call analysis (Service.Prepare) without letting anything through.
func TestDefaultMasksKeepTheDisplayRule(t *testing.T) {
	var datas []struct {
		typ  string
		data any
	}
	for n := 12; n <= 19; n++ {
		number := strings.Repeat("4", n)
		for _, sep := range []string{"", " ", "-"} {
			spaced := number[:4] + sep + number[4:8] + sep + number[8:]
			datas = append(datas, struct {
				typ  string
				data any
			}{unit.TypeCard, map[string]any{"number": spaced, "expiration_month": json.Number("12"), "expiration_year": json.Number("2031")}})
		}
	}
	for _, account := range []string{"1", "1234", "000123456789", strings.Repeat("9", 17)} {
		datas = append(datas, struct {
			typ  string
			data any
		}{unit.TypeBank, map[string]any{"routing_number": "110000000", "account_number": account}})
	}
	for _, d := range datas {
		mask, err := jsontext.AsPlain(DefaultMask[d.typ])
		if err != nil {
			t.Fatal(err)
		}
		fe := unit.FieldErrors{}
		AliasRules.CheckDisplay(d.typ, d.data, nil, mask, nil, "mask", "id", fe)
		if len(fe) != 0 {
			t.Errorf("the default %s mask over %v: %v, want no problem", d.typ, d.data, fe)
		}
	}
	// The check is not vacuous: a mask showing the whole number fails it.
	fe := unit.FieldErrors{}
	AliasRules.CheckDisplay(unit.TypeCard, map[string]any{"number": "4242424242424242"}, nil,
		map[string]any{"number": "{{ data.number }}"}, nil, "mask", "id", fe)
	if len(fe["mask"]) == 0 {
		t.Errorf("a mask of the whole number passed the display rule")
	}
}
