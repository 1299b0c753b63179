package vaulttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// IdemTokenize runs Tokenize of data through Idempotent with idemKey,
// counting the runs in *runs.
func IdemTokenize(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, idemKey, data string, runs *int) (*tokenvault.IdempotentResponse, bool, error) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "token", "data": data})
	return v.Idempotent(context.Background(), key, idemKey, tokenvault.IdempotentRequest{Operation: "POST /tokenize", Body: body},
		func(ctx context.Context) (*tokenvault.IdempotentResponse, error) {
			*runs++
			out, err := v.Tokenize(ctx, key, tokenvault.TokenRequest{Type: "token", Data: data})
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(out)
			if err != nil {
				return nil, err
			}
			return &tokenvault.IdempotentResponse{Status: 201, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: b}, nil
		})
}
