package export_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestExportCarriesEveryField: the exchange lines hold everything a token
// is made of. Each line, created in a fresh vault through CreateToken with
// its id, reads back as the original does (data, mask, metadata, search
// indexes, fingerprint expression, containers, expiry): all but what a
// receiving vault makes its own (created_at, which only an import keeps;
// the fingerprint, whose key is per tenant; the tenant and actors). The
// full round trip, export then import keeping created_at, is the import's
// to close (ImportTokens).
func TestExportCarriesEveryField(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	_, _, lines := x.export(t, tokenvault.ExportRequest{})

	fresh := vaulttest.NewEnv(t)
	writer := fresh.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	for _, l := range lines {
		var data, mask any
		if err := json.Unmarshal(l.Data, &data); err != nil {
			t.Fatal(err)
		}
		if len(l.Mask) > 0 {
			if err := json.Unmarshal(l.Mask, &mask); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := fresh.V.CreateToken(ctx, writer.Key, tokenvault.TokenRequest{ID: l.ID, Type: l.Type, Data: data, Mask: mask,
			Metadata: l.Metadata, SearchIndexes: l.SearchIndexes, FingerprintExpression: l.FingerprintExpression,
			Containers: l.Containers, ExpiresAt: l.ExpiresAt}); err != nil {
			t.Fatalf("CreateToken(line %s) = %v", l.ID, err)
		}
	}
	reader := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenRead)
	for _, orig := range x.tokens {
		want, err := e.V.GetToken(ctx, reader.Key, orig.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fresh.V.GetToken(ctx, writer.Key, orig.ID)
		if err != nil {
			t.Fatalf("GetToken(%s) in the fresh vault = %v", orig.ID, err)
		}
		// A card's cvc is never exported.
		if d, ok := want.Data.(map[string]any); ok {
			delete(d, "cvc")
		}
		ignore := cmpopts.IgnoreFields(tokenvault.Token{}, "TenantID", "Fingerprint", "CreatedAt", "CreatedBy", "ModifiedAt", "ModifiedBy")
		if diff := cmp.Diff(want, got, ignore); diff != "" {
			t.Errorf("token %s recreated from its line differs (-exported +recreated):\n%s", orig.ID, diff)
		}
	}
}
