package intents_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestCardBrand: test numbers of each network get their brand, the
// narrower ranges inside a wider one of another network included.
func TestCardBrand(t *testing.T) {
	for number, want := range map[string]string{
		"4242424242424242":    tokenvault.BrandVisa,
		"4111111111111":       tokenvault.BrandVisa,
		"5555555555554444":    tokenvault.BrandMastercard,
		"2223003122003222":    tokenvault.BrandMastercard,
		"378282246310005":     tokenvault.BrandAmex,
		"341111111111111":     tokenvault.BrandAmex,
		"6011111111111117":    tokenvault.BrandDiscover,
		"6445644564456445":    tokenvault.BrandDiscover,
		"6221260000000000":    tokenvault.BrandDiscover,
		"6229250000000000":    tokenvault.BrandDiscover,
		"6221250000000000":    tokenvault.BrandUnionPay,
		"6200000000000005":    tokenvault.BrandUnionPay,
		"8171999927660000":    tokenvault.BrandUnionPay,
		"3530111333300000":    tokenvault.BrandJCB,
		"3566002020360505":    tokenvault.BrandJCB,
		"30569309025904":      tokenvault.BrandDiners,
		"36227206271667":      tokenvault.BrandDiners,
		"3852000002323700":    tokenvault.BrandDiners,
		"6759649826438453":    tokenvault.BrandMaestro,
		"2200000000000004":    tokenvault.BrandMir,
		"5067310000000010":    tokenvault.BrandElo,
		"4514160000000000":    tokenvault.BrandElo,
		"9999999999999995":    tokenvault.BrandUnknown,
		"1234567890123456789": tokenvault.BrandUnknown,
	} {
		if got := tokenvault.CardBrand(number); got != want {
			t.Errorf("CardBrand(%s) = %s, want %s", number, got, want)
		}
	}
}
