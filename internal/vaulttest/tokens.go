package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// CardRequest is a valid card token request.
func CardRequest(number string) tokenvault.TokenRequest {
	return tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}
}

// Token creates a token from req with a new application that creates and
// reads tokens revealed everywhere.
func (e *Env) Token(t testing.TB, req tokenvault.TokenRequest) *tokenvault.Token {
	t.Helper()
	// token:read revealing too: fingerprints are shown only to keys that
	// read the data in clear.
	creator := e.Reader(t, "reveal", "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, creator.Key, req)
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return tok
}

// CVCOf reads the cvc in a token's data, "" when there is none.
func CVCOf(tok *tokenvault.Token) string {
	d, _ := tok.Data.(map[string]any)
	s, _ := d["cvc"].(string)
	return s
}

// LuhnValid reports whether number (digits only) passes the Luhn check,
// as a card number must.
func LuhnValid(number string) bool {
	sum, double := 0, false
	for i := len(number) - 1; i >= 0; i-- {
		d := int(number[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// MaskingAttacker is a key that reads cards in /pci/ only masked, but
// reveals, creates and searches in /sandbox/: it may tokenize guesses
// where it reads in clear and compare them with the card it only sees
// masked.
func (e *Env) MaskingAttacker(t *testing.T, transform string) *tokenvault.Application {
	t.Helper()
	a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "masking reader", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{
			{Priority: 1, Container: "/sandbox/", Transform: "reveal",
				Permissions: []string{"token:create", "token:read", "token:search"}},
			{Priority: 2, Container: "/pci/", Transform: transform,
				Permissions: []string{"token:create", "token:read", "token:search"}},
		},
	})
	if err != nil {
		t.Fatalf("CreateApplication(masking reader): %v", err)
	}
	return a
}
