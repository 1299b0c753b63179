package tokens_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestExpiredCardStaysEditable: a card that expired after it was
// tokenized can still be patched (metadata, containers, cvc); only a
// patch that changes its expiry is held to the date.
func TestExpiredCardStaysEditable(t *testing.T) {
	env := vaulttest.NewEnv(t)
	card := env.Token(t, vaulttest.CardRequest(vaulttest.Visa)) // expires 12/2031; the clock is in 2030
	updater := env.Reader(t, "reveal", "token:update", "token:read")
	env.Clock.Advance(3 * 365 * 24 * time.Hour)

	for _, patch := range []string{
		`{"metadata": {"customer": "42"}}`,
		`{"containers": ["/archive/"]}`,
		`{"data": {"cvc": "999"}}`,
	} {
		if _, err := env.V.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(patch)); err != nil {
			t.Errorf("UpdateToken(%s) on an expired card: %v", patch, err)
		}
	}
	_, err := env.V.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(`{"data": {"number": "5555555555554444"}}`))
	vaulttest.WantKind(t, "patching another number onto the expired card", err, tokenvault.Invalid)
	_, err = env.V.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(`{"data": {"expiration_year": 2032}}`))
	vaulttest.WantKind(t, "patching the expiry to another past date", err, tokenvault.Invalid)
	if e, ok := err.(*tokenvault.Error); !ok || e.Fields["data.expiration_year"] == nil {
		t.Errorf("error = %v, want one on data.expiration_year", err)
	}
	if _, err := env.V.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(`{"data": {"expiration_year": 2040}}`)); err != nil {
		t.Fatalf("renewing the expiry: %v", err)
	}
	got, err := env.V.GetToken(ctx, updater.Key, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Data.(map[string]any); d["expiration_year"] != json.Number("2040") || d["cvc"] != "999" {
		t.Errorf("data = %v", got.Data)
	}
}
