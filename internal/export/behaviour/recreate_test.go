package export_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"filippo.io/age"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/transfer"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// withSubjectKeys opens a Vault with a subject key store of its own, so
// that its tokens may carry a data subject.
func withSubjectKeys(o *tokenvault.Options) { o.SubjectKeys = memory.New() }

// TestExportImportRoundTrip: a tenant's tokens (a card, tokens with
// metadata, search indexes, a mask, a custom id, a bank account, one of a
// data subject) exported, decrypted, read back by the import's NDJSON
// reader and imported (ImportTokens) into a fresh vault, read there as
// they read where they came from: every field, id and created_at
// included. Only what a vault makes its own differs: the tenant, the
// fingerprint (its key is per tenant) and who created or changed them.
func TestExportImportRoundTrip(t *testing.T) {
	src := vaulttest.NewEnvOn(t, memory.New(), withSubjectKeys)
	x := newExportEnv(t, src)
	x.tokens = append(x.tokens, src.Token(t, tokenvault.TokenRequest{Type: "token", Data: "078-05-1120",
		Subject: "person-1", Containers: []string{"/people/eu/"}, Mask: "{{ data | reveal_last: 4 }}"}))
	_, file, _ := x.export(t, tokenvault.ExportRequest{})
	plain, err := age.Decrypt(bytes.NewReader(file), x.id)
	if err != nil {
		t.Fatal(err)
	}
	ndjson, err := io.ReadAll(plain)
	if err != nil {
		t.Fatal(err)
	}
	r, err := transfer.NewReader("ndjson", bytes.NewReader(ndjson), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []tokenvault.ImportLine
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}

	dst := vaulttest.NewEnvOn(t, memory.New(), withSubjectKeys)
	importer := dst.App(t, tokenvault.Private, tokenvault.PermTokenImport, tokenvault.PermTokenCreate)
	res, err := dst.V.ImportTokens(ctx, importer.Key, tokenvault.ImportBatch{Lines: lines})
	if err != nil || res.Imported != len(x.tokens) || res.Rejected != 0 {
		t.Fatalf("ImportTokens of %d lines = %+v, %v; want every token imported", len(lines), res, err)
	}
	want := src.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenRead)
	got := dst.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenRead)
	ignore := cmpopts.IgnoreFields(tokenvault.Token{}, "TenantID", "Fingerprint", "CreatedBy", "ModifiedAt", "ModifiedBy")
	for _, orig := range x.tokens {
		before, err := src.V.GetToken(ctx, want.Key, orig.ID)
		if err != nil {
			t.Fatal(err)
		}
		after, err := dst.V.GetToken(ctx, got.Key, orig.ID)
		if err != nil {
			t.Fatalf("GetToken(%s) in the vault it was imported into = %v", orig.ID, err)
		}
		// A card's cvc is never exported.
		if d, ok := before.Data.(map[string]any); ok {
			delete(d, "cvc")
		}
		if orig.ID == x.tokens[len(x.tokens)-1].ID && (after.Subject != "person-1" || after.Data != "078-05-1120") {
			t.Errorf("the data subject's token imported as %+v, want its subject and data", after)
		}
		if diff := cmp.Diff(before, after, ignore); diff != "" {
			t.Errorf("token %s after export and import differs (-exported +imported):\n%s", orig.ID, diff)
		}
	}
}
