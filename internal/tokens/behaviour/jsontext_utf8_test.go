package tokens_test

import (
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestInvalidUTF8IsRefused: Go callers can pass strings that are not UTF-8,
// which JSON encoding would silently turn into U+FFFD before sealing; every
// such string is Invalid with its path, and valid text (U+FFFD itself and
// surrogate pairs included) is kept.
func TestInvalidUTF8IsRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := e.Reader(t, "reveal", "token:create", "token:read", "token:update").Key
	card := func(number string) map[string]any {
		return map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}
	}
	for _, tc := range []struct {
		name  string
		req   tokenvault.TokenRequest
		field string
	}{
		{"data", tokenvault.TokenRequest{Type: "token", Data: "secret\xff"}, "data"},
		{"nested data", tokenvault.TokenRequest{Type: "token", Data: map[string]any{"a": []any{"ok", "b\xc3"}}}, "data.a[1]"},
		{"data key", tokenvault.TokenRequest{Type: "token", Data: map[string]any{"k\xff": "v"}}, "data"}, // a bad key is named by its object
		{"card number", tokenvault.TokenRequest{Type: "card", Data: card("4242\xff")}, "data.number"},
		{"metadata value", tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"ref": "\xfe"}}, "metadata.ref"},
		{"metadata key", tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"r\xfe": "v"}}, "metadata"},
		{"search index", tokenvault.TokenRequest{Type: "token", Data: "x", SearchIndexes: []string{"{{ data }}", "{{ data }}\xff"}}, "search_indexes[1]"},
		{"mask", tokenvault.TokenRequest{Type: "token", Data: "x", Mask: map[string]any{"m": "\xff"}}, "mask.m"},
		{"fingerprint expression", tokenvault.TokenRequest{Type: "token", Data: "x", FingerprintExpression: "{{ data }}\xff"}, "fingerprint_expression"},
		{"custom id", tokenvault.TokenRequest{ID: "order-\xff", Type: "token", Data: "x"}, "id"},
		{"container", tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/a\xff/"}}, "containers[0]"},
	} {
		_, err := e.V.CreateToken(ctx, key, tc.req)
		vaulttest.WantField(t, err, tc.field)
		_, err = e.V.Tokenize(ctx, key, map[string]any{"cards": []any{tc.req}})
		vaulttest.WantField(t, err, "cards[0]."+tc.field)
	}

	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"Go value, plain", map[string]any{"a": map[string]any{"b": "x\xff"}}, "a.b"},
		{"raw bytes", []byte("{\"a\": [\"ok\", \"x\xff\"]}"), "a[1]"},
		{"raw lone surrogate", json.RawMessage(`{"a": "\ud800"}`), "a"},
		{"raw lone low surrogate", json.RawMessage(`{"a": "x\udc00y"}`), "a"},
	} {
		_, err := e.V.Tokenize(ctx, key, tc.body)
		vaulttest.WantField(t, err, tc.field)
	}
	page, err := e.V.ListTokens(ctx, key, tokenvault.ListTokensRequest{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("after refusals: %d tokens, %v; want none", len(page.Data), err)
	}

	// Valid text: U+FFFD given as such, escaped in raw JSON, and a
	// surrogate pair.
	for _, body := range []any{
		map[string]any{"a": "x\uFFFDy"},
		json.RawMessage(`{"a": "x\ufffdy", "b": "\ud83d\ude00", "c": "\"\\u00e9"}`),
	} {
		out, err := e.V.Tokenize(ctx, key, body)
		if err != nil {
			t.Fatalf("Tokenize(valid text): %v", err)
		}
		got, err := e.V.GetToken(ctx, key, out.(map[string]any)["a"].(string))
		if err != nil || got.Data != "x\uFFFDy" {
			t.Errorf("read back %v, %v; want x\uFFFDy", got, err)
		}
	}

	tok, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, key, tok.ID, json.RawMessage("{\"metadata\": {\"a\": \"\xff\"}}"))
	vaulttest.WantField(t, err, "metadata.a")
	_, err = e.V.UpdateToken(ctx, key, tok.ID, json.RawMessage(`{"data": {"a": "\udfff"}}`))
	vaulttest.WantField(t, err, "data.a")
}
