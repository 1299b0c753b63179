package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// CardRequest is a valid card token request.
func CardRequest(number string) tokenvault.TokenRequest {
	return tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}
}

func (e *Env) Token(t testing.TB, req tokenvault.TokenRequest) *tokenvault.Token {
	t.Helper()
	// Token:read revealing too: fingerprints are shown only to keys that
	// read the data in clear.
	creator := e.Reader(t, "reveal", "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, creator.Key, req)
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return tok
}
