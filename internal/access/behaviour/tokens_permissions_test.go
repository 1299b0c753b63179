package access_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// tokenOperations are the token methods with the permission each needs.
var tokenOperations = []operation{
	{"Tokenize", "token:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.Tokenize(ctx, key, map[string]any{"a": "b"})
		return err
	}},
	{"CreateToken", "token:create", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "x"})
		return err
	}},
	{"GetToken", "token:read", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.GetToken(ctx, key, id)
		return err
	}},
	{"ListTokens", "token:read", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.ListTokens(ctx, key, tokenvault.ListTokensRequest{})
		return err
	}},
	{"Detokenize", "token:read", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.Detokenize(ctx, key, []any{"{{ " + id + " }}"})
		return err
	}},
	{"SearchTokens", "token:search", func(v *tokenvault.Vault, key tokenvault.Credential, _ string) error {
		_, err := v.SearchTokens(ctx, key, tokenvault.SearchTokensRequest{Query: "data:x"})
		return err
	}},
	{"UpdateToken", "token:update", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		_, err := v.UpdateToken(ctx, key, id, json.RawMessage(`{"metadata": {"a": "b"}}`))
		return err
	}},
	{"DeleteToken", "token:delete", func(v *tokenvault.Vault, key tokenvault.Credential, id string) error {
		return v.DeleteToken(ctx, key, id)
	}},
}

// TestTokenPermissionMatrix calls every token operation with a private key
// holding exactly its permission (it succeeds), one holding every other
// token permission (403), a management key (403), no key and an unknown
// key (401).
func TestTokenPermissionMatrix(t *testing.T) {
	e := vaulttest.NewEnv(t)
	all := tokenvault.PermissionsFor(tokenvault.Private)
	for _, op := range tokenOperations {
		t.Run(op.name, func(t *testing.T) {
			target := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"}).ID
			exact := e.App(t, tokenvault.Private, op.perm)
			without := e.App(t, tokenvault.Private, slices.DeleteFunc(slices.Clone(all), func(p string) bool { return p == op.perm })...)

			vaulttest.WantKind(t, op.name+" with no key", op.call(e.V, "", target), tokenvault.Unauthenticated)
			vaulttest.WantKind(t, op.name+" with an unknown key", op.call(e.V, "key_unknown", target), tokenvault.Unauthenticated)
			vaulttest.WantKind(t, op.name+" without "+op.perm, op.call(e.V, without.Key, target), tokenvault.PermissionDenied)
			vaulttest.WantKind(t, op.name+" with a management key", op.call(e.V, e.Mgmt, target), tokenvault.PermissionDenied)
			if err := op.call(e.V, exact.Key, target); err != nil {
				t.Errorf("%s with exactly %s = %v, want success", op.name, op.perm, err)
			}
		})
	}
}
