package tokens_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestUpdateCannotReadThroughNewExpressions: a new mask, search index or
// fingerprint expression is evaluated over the stored data and its result
// reaches the caller, so setting one over data the patch does not replace
// needs token:update with the reveal transform.
func TestUpdateCannotReadThroughNewExpressions(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	public := e.App(t, tokenvault.Public, tokenvault.PermTokenUpdate) // update, never read
	for patch, kind := range map[string]tokenvault.Kind{
		`{"mask": {"number": "{{ data.number }}", "cvc": "{{ data.cvc }}"}}`: tokenvault.PermissionDenied,
		`{"fingerprint_expression": "{{ data.number | slice: 0, 1 }}"}`:      tokenvault.PermissionDenied,
		`{"search_indexes": ["{{ data.number }}"]}`:                          tokenvault.PermissionDenied,
		// A key that may not read the card sends data with an expression:
		// its data replaces the stored data whole (never merged, which
		// would read the stored number), and a card without a number is
		// invalid.
		`{"data": {"cvc": "999"}, "mask": "{{ data.number }}"}`: tokenvault.Invalid,
	} {
		got, err := e.V.UpdateToken(ctx, public.Key, card.ID, json.RawMessage(patch))
		vaulttest.WantKind(t, "UpdateToken("+patch+") with a public key", err, kind)
		if got != nil && strings.Contains(vaulttest.MustJSON(got), vaulttest.Visa) {
			t.Errorf("the answer holds the card number: %+v", got)
		}
	}
	masked := e.Reader(t, "mask", "token:read")
	stored, err := e.V.GetToken(ctx, masked.Key, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := stored.Data.(map[string]any); d["number"] != "XXXXXXXXXXXX4242" || d["cvc"] != nil {
		t.Errorf("masked read after the refusals = %v, want the original mask", stored.Data)
	}
	clearReader := e.Reader(t, "reveal", "token:read")
	if clear, err := e.V.GetToken(ctx, clearReader.Key, card.ID); err != nil || clear.Fingerprint != card.Fingerprint {
		t.Errorf("fingerprint changed by a refused patch: %+v, %v", clear, err)
	}

	// Replacing the data whole, a new expression shows only what the
	// patch brought.
	plain := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "old secret"})
	if _, err := e.V.UpdateToken(ctx, public.Key, plain.ID, json.RawMessage(`{"data": "new value", "mask": "{{ data | slice: 0, 3 }}"}`)); err != nil {
		t.Errorf("replacing data and mask together: %v", err)
	}
	// With reveal, any expression may change.
	revealer := e.Reader(t, "reveal", "token:update")
	if _, err := e.V.UpdateToken(ctx, revealer.Key, card.ID, json.RawMessage(`{"search_indexes": ["{{ data.number | last4 }}"]}`)); err != nil {
		t.Errorf("a reveal updater changing search_indexes: %v", err)
	}
}
