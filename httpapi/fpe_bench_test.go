package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// benchCardNumber is the i-th Luhn-valid 16-digit number of BIN 400000.
func benchCardNumber(i int) string {
	s := fmt.Sprintf("400000%09d", i)
	sum := 0
	for j := range 15 {
		d := int(s[14-j] - '0')
		if j%2 == 0 { // doubled: the check digit will be to its right
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return s + fmt.Sprint((10-sum%10)%10)
}

// BenchmarkTokenizeFPEHandler is POST /tokenize of one card (a new number
// each time) with a generated id and with an id derived with fpe, in the
// same run. Run with:
//
//	go test -run '^$' -bench TokenizeFPEHandler -benchmem ./httpapi
func BenchmarkTokenizeFPEHandler(b *testing.B) {
	for _, c := range []struct{ name, id string }{
		{"uuid", ""},
		{"fpe_card_bin_last4", `,"id":"{{ data.number | fpe: 'card_bin_last4' }}"`},
		{"fpe_card", `,"id":"{{ data.number | fpe: 'card' }}"`},
		{"fpe_digits", `,"id":"{{ data.number | fpe: 'digits' }}"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			v, mgmt := benchVault(b)
			app := benchApp(b, v, mgmt, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
			h := httpapi.New(v, httpapi.Options{})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				body := fmt.Sprintf(`{"type":"card","data":{"number":%q,"expiration_month":12,"expiration_year":2031}%s}`, benchCardNumber(i), c.id)
				benchPost(b, h, "/tokenize", app.Key, body, http.StatusCreated)
				i++
			}
		})
	}
}

// BenchmarkFPEEncodeHandler is POST /fpe/encode of one card number.
func BenchmarkFPEEncodeHandler(b *testing.B) {
	v, mgmt := benchVault(b)
	app, err := v.CreateApplication(b.Context(), mgmt, tokenvault.CreateApplicationRequest{
		Name: "e", Type: tokenvault.Private, Permissions: []string{tokenvault.PermFPEEncode}})
	if err != nil {
		b.Fatal(err)
	}
	h := httpapi.New(v, httpapi.Options{})
	b.ReportAllocs()
	for b.Loop() {
		benchPost(b, h, "/fpe/encode", app.Key, `{"transformation":"card_bin_last4","values":["4242424242424242"]}`, http.StatusOK)
	}
}
