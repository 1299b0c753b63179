package expr_test

import (
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/expr"
)

func ExampleTemplate_Eval() {
	data := map[string]any{"number": "4242424242424242", "expiration_month": json.Number("3"), "expiration_year": json.Number("2031")}
	vars := expr.Vars(map[string]any{"data": data})
	for _, src := range []string{
		"{{ data.number | reveal_last: 4 }}",
		"{{ data.expiration_year }}",
		"Card {{ data.number | card_mask }}, expires {{ data | card_exp: 'MM/YYYY' }}",
	} {
		tmpl, err := expr.Parse(src)
		if err != nil {
			fmt.Println(err)
			continue
		}
		v, err := tmpl.Eval(vars)
		fmt.Printf("%T %v %v\n", v, v, err)
	}
	// Output:
	// string XXXXXXXXXXXX4242 <nil>
	// json.Number 2031 <nil>
	// string Card 424242XXXXXX4242, expires 03/2031 <nil>
}

func ExampleParse() {
	_, err := expr.Parse("{{ data.number | reveal_last: 4, 'XX' }}")
	fmt.Println(err)
	tmpl, _ := expr.Parse("{{ 0190a1b2 | json: '$.number' | last4 }} {{ 'literal' }} {{ 0190c3d4 }}")
	fmt.Println(tmpl.Roots())
	// Output:
	// position 17: reveal_last: the character argument must be exactly one character
	// [0190a1b2 0190c3d4]
}
