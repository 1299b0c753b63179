package tokens_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestDeduplicatedCreateAnswersOneShape: a deduplicating create answers a
// card's mask, as the create that made the token did, never the whole
// number when it finds the token again, through CreateToken and
// Tokenize: the same request shows what the key's rule allows every time.
func TestDeduplicatedCreateAnswersOneShape(t *testing.T) {
	e := vaulttest.NewEnv(t)
	backend := e.Reader(t, "reveal", "token:create", "token:read")
	req := tokenvault.TokenRequest{Type: "card", DeduplicateToken: true,
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}}
	var id string
	for i := range 3 {
		tok, err := e.V.CreateToken(ctx, backend.Key, req)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			id = tok.ID
		}
		out, err := e.V.Tokenize(ctx, backend.Key, []any{guessCard(vaulttest.Visa, true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []*tokenvault.Token{tok, out.([]any)[0].(*tokenvault.Token)} {
			text := vaulttest.MustJSON(got)
			if got.ID != id || strings.Contains(text, vaulttest.Visa) || !strings.Contains(text, "XXXXXXXXXXXX4242") {
				t.Errorf("create %d answered %s; want token %s with the mask, never the number", i, text, id)
			}
		}
	}
}
