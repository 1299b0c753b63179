package vaulttest_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestFailedWritesLoseNothing makes the n-th write of each operation fail,
// for every n, and checks that the store is exactly as before: a record, its
// indexes and its log line land together or not at all.
func TestFailedWritesLoseNothing(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs)
	target := e.App(t, tokenvault.Private, "token:read")
	at := e.Clock.Now().Add(time.Hour)
	tokens := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete")
	tok, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x",
		Metadata: map[string]string{"a": "b"}, SearchIndexes: []string{"{{ data }}"}, ExpiresAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		call func() error
	}{
		{"CreateApplication", func() error {
			_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "x", Type: "private", Permissions: []string{"token:read"}, ExpiresAt: &at})
			return err
		}},
		{"UpdateApplication", func() error {
			_, err := e.V.UpdateApplication(ctx, e.Mgmt, target.ID, tokenvault.UpdateApplicationRequest{Name: "y", Permissions: []string{"token:use"}})
			return err
		}},
		{"RegenerateApplicationKey", func() error {
			_, err := e.V.RegenerateApplicationKey(ctx, e.Mgmt, target.ID)
			return err
		}},
		{"CreateTenant", func() error {
			_, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "z"})
			return err
		}},
		{"RotateDataKey", func() error { return e.V.RotateDataKey(ctx, e.Mgmt) }},
		{"Tokenize", func() error {
			_, err := e.V.Tokenize(ctx, tokens.Key, map[string]any{"a": "1", "b": []any{"2", "3"},
				"c": map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 1, "expiration_year": 2031}}})
			return err
		}},
		{"GetToken", func() error {
			_, err := e.V.GetToken(ctx, tokens.Key, tok.ID)
			return err
		}},
		{"Detokenize", func() error {
			_, err := e.V.Detokenize(ctx, tokens.Key, []any{"{{ " + tok.ID + " }}"})
			return err
		}},
		{"UpdateToken", func() error {
			_, err := e.V.UpdateToken(ctx, tokens.Key, tok.ID, []byte(`{"data": "y", "metadata": {"c": "d"}}`))
			return err
		}},
		{"DeleteToken", func() error { return e.V.DeleteToken(ctx, tokens.Key, tok.ID) }},
		{"DeleteApplication", func() error { return e.V.DeleteApplication(ctx, e.Mgmt, target.ID) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			for n := 0; ; n++ {
				e.SettleChain(t)
				before := vaulttest.Dump(t, fs)
				fs.FailAfter(n)
				err := op.call()
				fs.FailAfter(-1)
				if err == nil {
					if n == 0 {
						t.Fatalf("%s succeeded with the first write failing", op.name)
					}
					return
				}
				vaulttest.WantKind(t, op.name, err, tokenvault.Internal)
				if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
					t.Fatalf("%s with write %d failing changed the store:\n%s", op.name, n, diff)
				}
				if n > 50 {
					t.Fatalf("%s never succeeded", op.name)
				}
			}
		})
	}
}
