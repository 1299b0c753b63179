package tokens_test

import (
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// displayAttacks are ids and masks whose filters, composed, show what the
// filters alone would hide: each is refused at its field.
var displayAttacks = []struct {
	name  string
	req   map[string]any
	field string
}{
	{"replace before fpe keeps where the fives are", map[string]any{"type": "card", "id": `{{ data.number | replace: '5', '-' | fpe: 'digits' }}`,
		"data": displayCard}, "id"},
	{"slice before fpe card_bin shows digits 4 to 9", map[string]any{"type": "card", "id": `{{ data.number | slice: 3, 13 | fpe: 'card_bin' }}`,
		"data": map[string]any{"number": "5470000000000000", "expiration_month": 12, "expiration_year": 2031}}, "id"},
	{"a mask folding odd digits onto even ones", map[string]any{"type": "card", "data": displayCard,
		"mask": map[string]any{"number": `{{ data.number | replace: '1', '0' | replace: '3', '2' | replace: '5', '4' | replace: '7', '6' | replace: '9', '8' }}`}}, "mask"},
	{"an ssn in an alias id", map[string]any{"type": "token", "data": "123-45-6789", "id": `{{ data | alias_preserve_length }}_{{ data }}`}, "id"},
	{"a bank account in an alias id", map[string]any{"type": "bank", "id": `{{ data.account_number | alias_preserve_length }}_{{ data.account_number }}`,
		"data": map[string]any{"routing_number": "110000000", "account_number": "000123456789"}}, "id"},
	{"fpe over one digit padded with constants is a ten-entry codebook", map[string]any{"type": "card",
		"id": `{{ data.number | slice: 8, 1 | pad_left: 6, '0' | fpe: 'digits' }}`, "data": displayCard}, "id"},
	{"a card mask of the number", map[string]any{"type": "card", "data": displayCard, "mask": map[string]any{"number": "{{ data.number }}"}}, "mask"},
	{"a card mask of the number upcased", map[string]any{"type": "card", "data": displayCard, "mask": map[string]any{"number": "{{ data.number | upcase }}"}}, "mask"},
	{"a card mask of the number in base64", map[string]any{"type": "card", "data": displayCard, "mask": map[string]any{"number": "{{ data.number | to_base64 }}"}}, "mask"},
}

var displayCard = map[string]any{"number": "5105105105105100", "expiration_month": 12, "expiration_year": 2031}

// TestDisplayRuleAttacks: each composed id or mask is refused, and the
// documented ones are accepted.
func TestDisplayRuleAttacks(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:update")
	for _, tc := range displayAttacks {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.V.Tokenize(ctx, app.Key, tc.req)
			vaulttest.WantField(t, err, tc.field)
		})
	}
	for _, req := range []map[string]any{
		{"type": "card", "data": displayCard},
		{"type": "card", "data": displayCard, "id": "{{ data.number | alias_card: true, true }}"},
		{"type": "card", "data": displayCard, "id": `{{ data.number | fpe: "card_bin_last4" }}`},
		{"type": "card", "data": displayCard, "mask": map[string]any{"number": "{{ data.number | reveal: 6, 4 }}"}},
		{"type": "token", "data": "123-45-6789", "id": "{{ data | alias_preserve_format: 0, 4 }}", "mask": "{{ data | reveal_last: 4 }}"},
	} {
		if _, err := e.V.Tokenize(ctx, app.Key, req); err != nil {
			t.Errorf("Tokenize(%v) = %v, want it accepted", req, err)
		}
	}
	// A patch setting a card's mask is held to the rule whatever the id.
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "card", Data: displayCard})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"mask": {"number": "{{ data.number | to_base64 }}"}}`))
	vaulttest.WantField(t, err, "mask")
}

// TestDisplayRuleOnIntentConversion: converting an intent sets the mask
// and id of a token too: they are held to the rule, and the intent is
// left to convert again with a mask that keeps it.
func TestDisplayRuleOnIntentConversion(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID,
		Mask: map[string]any{"number": "{{ data.number | downcase }}"}})
	vaulttest.WantField(t, err, "mask")
	_, err = e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID,
		ID: `{{ data.number | remove: '4' | fpe: 'digits' }}`})
	vaulttest.WantField(t, err, "id")
	if _, err := e.V.CreateToken(ctx, e.Priv.Key, tokenvault.TokenRequest{TokenIntentID: in.ID,
		Mask: map[string]any{"number": "{{ data.number | card_mask }}"}}); err != nil {
		t.Fatalf("converting with a mask within the rule: %v", err)
	}
}

// TestDisplayRuleMetadataInID: an fpe id reads metadata for its tweak (it
// shows nothing of it), never in clear: no mask shows metadata.
func TestDisplayRuleMetadataInID(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read")
	ok := tokenvault.TokenRequest{Type: "card", Data: displayCard, Metadata: map[string]string{"region": "eu"},
		ID: `{{ data.number | fpe_tweaked: "card_bin_last4", "metadata.region" }}`}
	if _, err := e.V.CreateToken(ctx, app.Key, ok); err != nil {
		t.Fatalf("a tweak from metadata: %v", err)
	}
	bad := tokenvault.TokenRequest{Type: "card", Data: displayCard, Metadata: map[string]string{"ssn": "123-45-6789"},
		ID: `{{ data.number | fpe: "card_bin_last4" }}{{ metadata.ssn | replace: '1', '-' | fpe: 'digits' }}`}
	_, err := e.V.CreateToken(ctx, app.Key, bad)
	vaulttest.WantField(t, err, "id")
}

// TestDisplayRulePatchKeepsTheID: a token whose alias id shows the last
// four of an ssn (its mask shows them) cannot have its mask narrowed
// below that; widening or keeping it is allowed.
func TestDisplayRulePatchKeepsTheID(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:update")
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789",
		ID: "{{ data | alias_preserve_format: 0, 4 }}", Mask: "{{ data | reveal_last: 4 }}"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"mask": null}`))
	vaulttest.WantField(t, err, "mask")
	_, err = e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"mask": "{{ data | reveal_last: 2 }}"}`))
	vaulttest.WantField(t, err, "mask")
	if _, err := e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"mask": "{{ data | last4 }}"}`)); err != nil {
		t.Errorf("a mask showing the same: %v", err)
	}
}
