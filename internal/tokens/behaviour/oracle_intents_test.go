package tokens_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestIntentsTellNonReadersNothing: a masking key sees a stored card's
// BIN, last four and fingerprint; a key that may not read cards (a public
// key, a private key reading only elsewhere) creating intents of guessed
// numbers, and reading them back, gets no fingerprint and the same answer
// for the right guess as for the wrong ones, so the intents cannot be
// matched against the stored card. A key that may read cards keeps the
// fingerprint.
func TestIntentsTellNonReadersNothing(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		admin := e.Reader(t, "reveal", "token:create", "token:read")
		stored, err := e.V.CreateToken(ctx, admin.Key, vaulttest.CardRequest(vaulttest.Visa))
		if err != nil {
			t.Fatal(err)
		}
		reader := e.Reader(t, "reveal", "token:read")
		seen, err := e.V.GetToken(ctx, reader.Key, stored.ID)
		if err != nil || seen.Fingerprint == "" {
			t.Fatalf("the revealing key's view = %+v, %v; want the fingerprint the attack starts from", seen, err)
		}
		public := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
		elsewhere, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "elsewhere", Type: tokenvault.Private,
			Permissions: []string{tokenvault.PermTokenIntentCreate},
			Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/mine/", Transform: tokenvault.TransformReveal,
				Permissions: []string{tokenvault.PermTokenRead}}}})
		if err != nil {
			t.Fatal(err)
		}
		for name, key := range map[string]tokenvault.Credential{"public key": public.Key, "key reading elsewhere": elsewhere.Key} {
			var first map[string]any
			for _, g := range luhnCandidates(100, vaulttest.Visa, rightAt) {
				in, err := e.V.CreateTokenIntent(ctx, key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
					Data: map[string]any{"number": g, "expiration_month": 12, "expiration_year": 2031}})
				if err != nil {
					t.Fatalf("%s: CreateTokenIntent(%s): %v", name, g, err)
				}
				got, err := e.V.GetTokenIntent(ctx, key, in.ID)
				if err != nil {
					t.Fatalf("%s: GetTokenIntent: %v", name, err)
				}
				for _, answer := range []*tokenvault.TokenIntent{in, got} {
					text := vaulttest.MustJSON(answer)
					if strings.Contains(text, `"fingerprint"`) || strings.Contains(text, stored.Fingerprint) {
						t.Fatalf("%s: the intent of %s tells its fingerprint: %s", name, g, text)
					}
					var m map[string]any
					json.Unmarshal([]byte(text), &m)
					card := m["card"].(map[string]any)
					if card["bin"] != g[:8] || card["last4"] != g[12:] {
						t.Fatalf("%s: card summary %v of %s", name, card, g)
					}
					for _, k := range []string{"id", "card"} {
						delete(m, k)
					}
					if first == nil {
						first = m
					} else if diff := cmp.Diff(first, m); diff != "" {
						t.Fatalf("%s: the intent of %s differs from another guess's:\n%s", name, g, diff)
					}
				}
			}
		}

		// A key that reads cards in clear where they go is shown the
		// fingerprint; one that reads them masked is not.
		masker := e.App(t, tokenvault.Private, tokenvault.PermTokenRead, tokenvault.PermTokenIntentCreate)
		masked, err := e.V.CreateTokenIntent(ctx, masker.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
			Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}})
		if err != nil || masked.Fingerprint != "" {
			t.Errorf("CreateTokenIntent by a masking reader = %+v, %v; want no fingerprint", masked, err)
		}
		reader = e.Revealer(t, tokenvault.PermTokenRead, tokenvault.PermTokenIntentCreate)
		in, err := e.V.CreateTokenIntent(ctx, reader.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
			Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}})
		if err != nil || in.Fingerprint != stored.Fingerprint {
			t.Errorf("CreateTokenIntent by a reader = %+v, %v; want the stored card's fingerprint", in, err)
		}
	})
}

// TestIntentConversionExpressionsTellNothing: a backend key that may not
// read what it converts (token:create with the mask transform, no
// token:read), setting a mask, search index or fingerprint expression over
// the intent's data, is refused before the expression is evaluated:
// whether it fails over the intent's data (a guessed character that is
// wrong) made 400 against 201 an oracle reading the data a character at a
// time, the intent kept for the next guess. A key whose token:create rule
// reveals may set them.
func TestIntentConversionExpressionsTellNothing(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	converter := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	var answers []string
	for _, guess := range []string{"7", "5"} {
		expr := `{{ data | slice: 0, 1 | replace: "` + guess + `", "true" | to_boolean }}`
		for _, req := range []tokenvault.TokenRequest{{Mask: expr}, {SearchIndexes: []string{expr}}, {FingerprintExpression: expr}} {
			in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "789-00-1234"})
			if err != nil {
				t.Fatal(err)
			}
			req.TokenIntentID = in.ID
			_, err = e.V.CreateToken(ctx, converter.Key, req)
			vaulttest.WantKind(t, "an expression over the intent's data by a key that may not read it", err, tokenvault.PermissionDenied)
			answers = append(answers, fmt.Sprint(err))
			if _, err := e.V.GetTokenIntent(ctx, e.Pub.Key, in.ID); err != nil {
				t.Errorf("the intent after a refused conversion: %v", err)
			}
		}
	}
	for i := range 3 {
		if answers[i] != answers[i+3] {
			t.Errorf("the right guess and a wrong one are answered differently: %q, %q", answers[i], answers[i+3])
		}
	}
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "789-00-1234"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID, Mask: "{{ data | reveal_last: 4 }}"})
	if err != nil || tok.Mask != "XXXXXXX1234" {
		t.Errorf("a revealing key converting with a mask = %+v, %v", tok, err)
	}
}
