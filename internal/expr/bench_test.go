package expr_test

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/expr"
)

// BenchmarkEvalMask is the default card mask, evaluated for every card
// tokenized.
func BenchmarkEvalMask(b *testing.B) {
	tmpl, err := expr.Parse("{{ data.number | reveal_last: 4 }}")
	if err != nil {
		b.Fatal(err)
	}
	vars := expr.Vars(map[string]any{"data": map[string]any{"number": pan}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Eval(vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	src := "Card {{ data.number | card_mask }} exp {{ data | card_exp: 'MM/YYYY' }} {{ data | json: '$.a[0]' | pad_left: 8, '0' }}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := expr.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
