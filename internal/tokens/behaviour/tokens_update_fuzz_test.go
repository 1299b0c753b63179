package tokens_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// FuzzUpdateToken applies arbitrary merge patches with UpdateToken to a
// fresh token of one of several shapes (base picks it: a plain string, an
// object with a mask, search indexes and a fingerprint expression, a
// card, a bank account, a token that expires). UpdateToken must not panic
// nor fail with Internal; a body that is not a JSON object is Invalid; a
// failed update leaves the token as it was, and a successful one keeps
// its id and type.
//
// Every input runs on a fresh Vault, so that a failure reproduces from its
// input alone and the store does not grow with the run (the memory store
// slows down as it fills).
//
// Seeds are in testdata/fuzz/FuzzUpdateToken.
func FuzzUpdateToken(f *testing.F) {
	expires := vaulttest.NewClock().Now().Add(time.Hour)
	bases := []tokenvault.TokenRequest{
		{Type: "token", Data: "Ada Lovelace", Containers: []string{"/people/"}, Metadata: map[string]string{"k": "v"}},
		{Type: "token", Data: map[string]any{"a": 1, "b": map[string]any{"c": "x", "d": []any{1, 2}}},
			Mask: map[string]any{"a": "{{ data.a }}"}, SearchIndexes: []string{"{{ data.b.c }}"},
			FingerprintExpression: "{{ data.b.c }}", DeduplicateToken: true},
		vaulttest.CardRequest(vaulttest.Visa),
		{Type: "bank", Data: map[string]any{"routing_number": "021000021", "account_number": "1234567890"}},
		{Type: "token", Data: 42, ExpiresAt: &expires, Containers: []string{"/a/", "/b/c/"}},
	}
	f.Fuzz(func(t *testing.T, base uint8, patch []byte) {
		e := vaulttest.NewEnv(t)
		app := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete").Key
		created, err := e.V.CreateToken(ctx, app, bases[int(base)%len(bases)])
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		id := created.ID
		defer func() {
			if err := e.V.DeleteToken(ctx, app, id); err != nil {
				t.Fatalf("DeleteToken after the update: %v", err)
			}
		}()
		before, err := e.V.GetToken(ctx, app, id)
		if err != nil {
			t.Fatalf("GetToken: %v", err)
		}

		updated, err := e.V.UpdateToken(ctx, app, id, json.RawMessage(patch))
		after, gerr := e.V.GetToken(ctx, app, id)
		if gerr != nil {
			t.Fatalf("GetToken after UpdateToken(%q) = %v: %v", patch, err, gerr)
		}
		// The Vault reads the first JSON value of a body.
		var obj any
		dec := json.NewDecoder(bytes.NewReader(patch))
		_, isObject := obj.(map[string]any)
		if dec.Decode(&obj) == nil {
			_, isObject = obj.(map[string]any)
		}
		if err != nil {
			if k := tokenvault.ErrorKind(err); k == tokenvault.Internal || k == tokenvault.Unavailable {
				t.Fatalf("UpdateToken(%q) = %v (kind %v), a server error for client input", patch, err, k)
			}
			if !isObject && tokenvault.ErrorKind(err) != tokenvault.Invalid {
				t.Fatalf("UpdateToken(%q), not a JSON object, = %v, want Invalid", patch, err)
			}
			if !reflect.DeepEqual(after, before) {
				t.Fatalf("UpdateToken(%q) = %v, yet the token changed from\n%+v\nto\n%+v", patch, err, before, after)
			}
			return
		}
		if !isObject {
			t.Fatalf("UpdateToken(%q), not a JSON object, succeeded", patch)
		}
		if updated == nil || updated.ID != id || updated.Type != before.Type || after.ID != id || after.Type != before.Type {
			t.Fatalf("UpdateToken(%q) = %+v, then %+v; it was a %s %s", patch, updated, after, before.Type, id)
		}
		if _, err := json.Marshal(after); err != nil {
			t.Fatalf("the updated token has no JSON form: %v", err)
		}
	})
}
