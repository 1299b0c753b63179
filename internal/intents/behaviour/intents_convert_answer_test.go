package intents_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTokenIntentConvertAnswersOneShape: a conversion answers what the
// key's rule shows of a created token (a card's mask, never its number,
// for a reveal rule), whether it created the token or deduplicated onto
// one, changed or unchanged, in either order: the same conversion used to
// answer XXXXXXXXXXXX4242 the first time and the whole number when
// repeated.
func TestTokenIntentConvertAnswersOneShape(t *testing.T) {
	const number, masked = "4242424242424242", "XXXXXXXXXXXX4242"
	for _, order := range []string{"created first", "held first"} {
		t.Run(order, func(t *testing.T) {
			e := vaulttest.NewIntentEnv(t)
			updater, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "updater", Type: tokenvault.Private,
				Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
					Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate}}}})
			if err != nil {
				t.Fatal(err)
			}
			if order == "held first" {
				if _, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()}); err != nil {
					t.Fatal(err)
				}
			}
			convert := func(what string, key tokenvault.Credential, year int, viaTokenize bool) {
				t.Helper()
				in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
					Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": year}})
				if err != nil {
					t.Fatal(err)
				}
				var tok *tokenvault.Token
				if viaTokenize {
					out, err := e.V.Tokenize(ctx, key, map[string]any{"card": map[string]any{"token_intent_id": in.ID}})
					if err != nil {
						t.Fatalf("%s: Tokenize: %v", what, err)
					}
					tok = out.(map[string]any)["card"].(*tokenvault.Token)
				} else if tok, err = e.V.CreateToken(ctx, key, tokenvault.TokenRequest{TokenIntentID: in.ID}); err != nil {
					t.Fatalf("%s: CreateToken: %v", what, err)
				}
				text := vaulttest.MustJSON(tok)
				if strings.Contains(text, number) || !strings.Contains(text, masked) {
					t.Errorf("%s answered %s; want the card's mask %s and never its number", what, text, masked)
				}
			}
			convert("a conversion", e.Priv.Key, 2035, false)
			convert("the same conversion again (deduplicated, unchanged)", e.Priv.Key, 2035, false)
			convert("again through Tokenize", e.Priv.Key, 2035, true)
			convert("a deduplicated conversion updating the token", updater.Key, 2039, false)
			convert("the same update again (data unchanged)", updater.Key, 2039, true)
		})
	}
}
