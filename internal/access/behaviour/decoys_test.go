package access_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestDecoyReadFreezesTheKey: a decoy looks like any token of the
// application it appears created by, to every key; the first read of it
// (here by a list page, then by a get) answers as any read and then fires
// access.anomaly and freezes the reader's key, everywhere, until a
// manager releases it; a decoy created with freeze false only fires the
// event. Only a management key lists decoys.
func TestDecoyReadFreezesTheKey(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tap := vaulttest.TapEvents(e.V)
		if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{tokenvault.EventAccessAnomaly}, true); err != nil {
			t.Fatal(err)
		}
		writer := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		real, err := e.V.CreateToken(ctx, writer.Key, tokenvault.TokenRequest{Type: "token", Data: "real-value"})
		if err != nil {
			t.Fatal(err)
		}
		decoy, err := e.V.CreateDecoy(ctx, e.Mgmt, tokenvault.CreateDecoyRequest{ApplicationID: writer.ID,
			Token: tokenvault.TokenRequest{Type: "token", Data: "decoy-value"}})
		if err != nil {
			t.Fatalf("CreateDecoy: %v", err)
		}
		if !decoy.Freeze || decoy.ApplicationID != writer.ID {
			t.Fatalf("CreateDecoy = %+v, want freeze by default, created by the writer", decoy)
		}
		mild, err := e.V.CreateDecoy(ctx, e.Mgmt, tokenvault.CreateDecoyRequest{ApplicationID: writer.ID,
			Token: tokenvault.TokenRequest{Type: "token", Data: "mild-decoy"}, Freeze: new(false)})
		if err != nil {
			t.Fatal(err)
		}
		list, err := e.V.ListDecoys(ctx, e.Mgmt)
		if err != nil || len(list) != 2 || list[0].ID != decoy.ID || list[1].ID != mild.ID || list[1].Freeze {
			t.Fatalf("ListDecoys = %+v, %v", list, err)
		}
		if _, err := e.V.ListDecoys(ctx, writer.Key); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Fatalf("ListDecoys by a private key: %v, want PermissionDenied", err)
		}

		// Indistinguishable: the same fields set, from the same creator.
		// (Reading them is what the writer, a key that reads, would do:
		// the reads below are by other keys.)
		shape := func(tok *tokenvault.Token) []bool {
			return []bool{tok.ID != "", tok.TenantID != "", tok.Type == "token", tok.CreatedBy == writer.ID,
				tok.Fingerprint != "", tok.Mask == nil, tok.ExpiresAt == nil, tok.ModifiedAt == nil, len(tok.Containers) == len(real.Containers)}
		}
		auditor := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenRead)
		page, err := e.V.ListTokens(ctx, auditor.Key, tokenvault.ListTokensRequest{IDs: []string{real.ID, decoy.ID}})
		if err != nil || len(page.Data) != 2 {
			t.Fatalf("ListTokens = %+v, %v; want both, answered as any list", page, err)
		}
		if diff := cmp.Diff(shape(&page.Data[0]), shape(&page.Data[1])); diff != "" {
			t.Errorf("a decoy differs from a token in shape (-token +decoy):\n%s", diff)
		}
		if _, err := e.V.GetToken(ctx, auditor.Key, real.ID); !errors.Is(err, tokenvault.ErrKeyFrozen) {
			t.Fatalf("after listing a decoy, GetToken: %v, want ErrKeyFrozen", err)
		}
		if n := anomalies(tap); n != 1 {
			t.Fatalf("%d anomalies after one decoy read, want 1", n)
		}

		// A get of a decoy that does not freeze: the event alone.
		reader := e.Reader(t, tokenvault.TransformMask, tokenvault.PermTokenRead)
		if _, err := e.V.GetToken(ctx, reader.Key, mild.ID); err != nil {
			t.Fatalf("GetToken(mild decoy): %v", err)
		}
		if _, err := e.V.GetToken(ctx, reader.Key, real.ID); err != nil {
			t.Fatalf("after a decoy without freeze, GetToken: %v", err)
		}
		if n := anomalies(tap); n != 2 {
			t.Fatalf("%d anomalies, want 2", n)
		}

		// A detokenization of the freezing decoy by a session.
		sess := e.Session(t)
		authorizer := e.Authorizer(t)
		if err := e.V.AuthorizeSession(ctx, authorizer.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce,
			Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.V.Detokenize(ctx, sess.SessionKey, []any{"{{" + decoy.ID + "}}"}); err != nil {
			t.Fatalf("a session's Detokenize of a decoy: %v, want it answered", err)
		}
		if _, err := e.V.GetToken(ctx, authorizer.Key, real.ID); !errors.Is(err, tokenvault.ErrKeyFrozen) {
			t.Fatalf("the authorizer of a session that read a decoy: %v, want ErrKeyFrozen", err)
		}
		if _, err := e.V.UnfreezeApplication(ctx, e.Mgmt, auditor.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.V.GetToken(ctx, auditor.Key, real.ID); err != nil {
			t.Fatalf("after release: %v", err)
		}
	})
}
