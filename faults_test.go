package tokenvault_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestFailedWritesLoseNothing makes the n-th write of each operation fail,
// for every n, and checks that the store is exactly as before: a record, its
// indexes and its log line land together or not at all.
func TestFailedWritesLoseNothing(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := newEnvOn(t, fs)
	target := e.app(t, tokenvault.Private, "token:read")
	at := e.clock.Now().Add(time.Hour)
	tokens := e.reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete")
	tok, err := e.v.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x",
		Metadata: map[string]string{"a": "b"}, SearchIndexes: []string{"{{ data }}"}, ExpiresAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		call func() error
	}{
		{"CreateApplication", func() error {
			_, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{Name: "x", Type: "private", Permissions: []string{"token:read"}, ExpiresAt: &at})
			return err
		}},
		{"UpdateApplication", func() error {
			_, err := e.v.UpdateApplication(ctx, e.mgmt, target.ID, tokenvault.UpdateApplicationRequest{Name: "y", Permissions: []string{"token:use"}})
			return err
		}},
		{"RegenerateApplicationKey", func() error {
			_, err := e.v.RegenerateApplicationKey(ctx, e.mgmt, target.ID)
			return err
		}},
		{"CreateTenant", func() error {
			_, err := e.v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "z"})
			return err
		}},
		{"RotateDataKey", func() error { return e.v.RotateDataKey(ctx, e.mgmt) }},
		{"Tokenize", func() error {
			_, err := e.v.Tokenize(ctx, tokens.Key, map[string]any{"a": "1", "b": []any{"2", "3"},
				"c": map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 1, "expiration_year": 2031}}})
			return err
		}},
		{"GetToken", func() error {
			_, err := e.v.GetToken(ctx, tokens.Key, tok.ID)
			return err
		}},
		{"Detokenize", func() error {
			_, err := e.v.Detokenize(ctx, tokens.Key, []any{"{{ " + tok.ID + " }}"})
			return err
		}},
		{"UpdateToken", func() error {
			_, err := e.v.UpdateToken(ctx, tokens.Key, tok.ID, []byte(`{"data": "y", "metadata": {"c": "d"}}`))
			return err
		}},
		{"DeleteToken", func() error { return e.v.DeleteToken(ctx, tokens.Key, tok.ID) }},
		{"DeleteApplication", func() error { return e.v.DeleteApplication(ctx, e.mgmt, target.ID) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			for n := 0; ; n++ {
				settleChain(t, e.v)
				before := dump(t, fs)
				fs.FailAfter(n)
				err := op.call()
				fs.FailAfter(-1)
				if err == nil {
					if n == 0 {
						t.Fatalf("%s succeeded with the first write failing", op.name)
					}
					return
				}
				wantKind(t, op.name, err, tokenvault.Internal)
				if diff := cmp.Diff(before, dump(t, fs)); diff != "" {
					t.Fatalf("%s with write %d failing changed the store:\n%s", op.name, n, diff)
				}
				if n > 50 {
					t.Fatalf("%s never succeeded", op.name)
				}
			}
		})
	}
}
