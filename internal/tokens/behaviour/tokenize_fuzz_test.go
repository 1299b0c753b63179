package tokens_test

import (
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// FuzzTokenize sends arbitrary bodies to Tokenize and Detokenize: neither
// may panic, and every failure must be a client error, never Internal.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		`{"type": "token", "data": "x"}`,
		`{"a": "b", "c": [1, 2, {"d": null}]}`,
		`[{"type": "card", "data": {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}}]`,
		`{"type": "bank", "data": {"routing_number": "021000021", "account_number": "1234"}}`,
		`{"type": "token", "data": {"a": 1}, "mask": "{{ data.a | pad_left: 9 }}", "search_indexes": ["{{ data.a }}"]}`,
		`{"type": "token", "data": "x", "fingerprint_expression": "{{ data | json: '$.a' }}", "deduplicate_token": true}`,
		`{"type": "token", "data": "x", "id": "custom-id", "containers": ["/a/b/"], "metadata": {"k": "v"}}`,
		`{"x": "{{ 0190a1b2-0000-7000-8000-000000000000 }}"}`,
	} {
		f.Add(s)
	}
	e := vaulttest.NewEnv(f)
	creator := e.Reader(f, "reveal", "token:create", "token:read")
	f.Fuzz(func(t *testing.T, body string) {
		for name, call := range map[string]func() error{
			"Tokenize": func() error {
				_, err := e.V.Tokenize(ctx, creator.Key, json.RawMessage(body))
				return err
			},
			"Detokenize": func() error {
				_, err := e.V.Detokenize(ctx, creator.Key, json.RawMessage(body))
				return err
			},
		} {
			if err := call(); err != nil && tokenvault.ErrorKind(err) == tokenvault.Internal {
				t.Fatalf("%s(%s) = %v, an internal error for client input", name, body, err)
			}
		}
	})
}
