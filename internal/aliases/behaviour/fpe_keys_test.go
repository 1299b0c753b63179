package aliases_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestRotateFPEKey: a rotation makes version 2 current; encodings made
// under version 1 still decode when the request names it, new encodings
// and fpe token ids use version 2 (another result for the same value),
// tokens whose ids version 1 derived still read (and deduplication, by
// fingerprint, still finds them), another tenant's keys
// do not move, and the rotation is a line of the tenant's audit log. A
// version the tenant never had, and a version given to encode, are
// Invalid at key_version; rotating needs tenant:update.
func TestRotateFPEKey(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.Revealer(t, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermFPEEncode, tokenvault.PermFPEDecode)
	values := []string{"4242424242424242", "123-45-6789"}
	req := tokenvault.FPERequest{Transformation: "digits", Tweak: "t", Values: values}
	before, err := e.V.FPEEncode(ctx, app.Key, req)
	if err != nil || before.KeyVersion != 1 {
		t.Fatalf("FPEEncode before any rotation = %+v, %v; want key version 1", before, err)
	}
	oldTok, err := e.V.CreateToken(ctx, app.Key, withID(vaulttest.CardRequest("4242424242424242"), fpeCardID))
	if err != nil {
		t.Fatal(err)
	}
	other := e.Tenant(t, "Other")
	otherApp, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "o", Type: tokenvault.Private, Permissions: []string{tokenvault.PermFPEEncode}})
	if err != nil {
		t.Fatal(err)
	}
	otherBefore, err := e.V.FPEEncode(ctx, otherApp.Key, req)
	if err != nil {
		t.Fatal(err)
	}

	_, err = e.V.RotateFPEKey(ctx, app.Key)
	vaulttest.WantKind(t, "RotateFPEKey without tenant:update", err, tokenvault.PermissionDenied)
	version, err := e.V.RotateFPEKey(ctx, e.Mgmt)
	if err != nil || version != 2 {
		t.Fatalf("RotateFPEKey = %d, %v; want 2", version, err)
	}

	after, err := e.V.FPEEncode(ctx, app.Key, req)
	if err != nil || after.KeyVersion != 2 {
		t.Fatalf("FPEEncode after the rotation = %+v, %v; want key version 2", after, err)
	}
	for i := range values {
		if after.Values[i] == before.Values[i] {
			t.Errorf("values[%d] encodes as before the rotation: %q", i, after.Values[i])
		}
	}
	decode := func(what string, vals []string, version int) []string {
		t.Helper()
		d := req
		d.Values, d.KeyVersion = vals, version
		out, err := e.V.FPEDecode(ctx, app.Key, d)
		if err != nil {
			t.Fatalf("FPEDecode(%s) = %v", what, err)
		}
		if want := cmp.Or(version, 2); out.KeyVersion != want {
			t.Errorf("FPEDecode(%s): key version %d, want %d", what, out.KeyVersion, want)
		}
		return out.Values
	}
	if got := decode("version 1 encodings, key_version 1", before.Values, 1); !slices.Equal(got, values) {
		t.Errorf("version 1 encodings decode with key_version 1 as %q, want %q", got, values)
	}
	if got := decode("version 2 encodings, current", after.Values, 0); !slices.Equal(got, values) {
		t.Errorf("version 2 encodings decode as %q, want %q", got, values)
	}
	if got := decode("version 2 encodings, key_version 2", after.Values, 2); !slices.Equal(got, values) {
		t.Errorf("version 2 encodings decode with key_version 2 as %q, want %q", got, values)
	}
	if got := decode("version 1 encodings, current", before.Values, 0); slices.Equal(got, values) {
		t.Error("version 1 encodings decode under version 2")
	}
	bad := req
	bad.KeyVersion = 3
	_, err = e.V.FPEDecode(ctx, app.Key, bad)
	vaulttest.WantField(t, err, "key_version")
	bad.KeyVersion = -1
	_, err = e.V.FPEDecode(ctx, app.Key, bad)
	vaulttest.WantField(t, err, "key_version")
	bad.KeyVersion = 1
	_, err = e.V.FPEEncode(ctx, app.Key, bad)
	vaulttest.WantField(t, err, "key_version")

	if got, err := e.V.GetToken(ctx, app.Key, oldTok.ID); err != nil || got.ID != oldTok.ID {
		t.Errorf("GetToken(%s), its id derived before the rotation = %+v, %v", oldTok.ID, got, err)
	}
	dedupe := withID(vaulttest.CardRequest("4242424242424242"), fpeCardID)
	dedupe.DeduplicateToken = true
	if got, err := e.V.CreateToken(ctx, app.Key, dedupe); err != nil || got.ID != oldTok.ID {
		t.Errorf("the same card after the rotation, deduplicated (by its fingerprint) = %+v, %v; want the first token, %s", got, err, oldTok.ID)
	}

	newTok, err := e.V.CreateToken(ctx, app.Key, withID(vaulttest.CardRequest("4242424242424242"), fpeCardID))
	if err != nil || newTok.ID == oldTok.ID || newTok.ID[:6] != "424242" || newTok.ID[12:] != "4242" {
		t.Errorf("the same card after the rotation = %+v, %v; want a new fpe id (not %s)", newTok, err, oldTok.ID)
	}

	if otherAfter, err := e.V.FPEEncode(ctx, otherApp.Key, req); err != nil || otherAfter.KeyVersion != 1 || !slices.Equal(otherAfter.Values, otherBefore.Values) {
		t.Errorf("another tenant's encoding after the rotation = %+v, %v; want version 1 as before", otherAfter, err)
	}

	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(logs.Data, func(l tokenvault.Log) bool {
		return l.Message == "FPE key rotated to version 2" && l.Operation == tokenvault.OpUpdate
	}) {
		t.Errorf("no audit line says the FPE key rotated: %+v", logs.Data)
	}
	// The line is on the tenant's audit chain, which verifies once signed.
	if _, err := e.V.SignAuditChain(ctx, e.Boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	report, err := e.V.VerifyAuditChain(ctx, e.Boot.Tenant.ID)
	if err != nil || !report.OK || report.Lines == 0 {
		t.Errorf("VerifyAuditChain after the rotation = %+v, %v", report, err)
	}
}

// withID is req with id.
func withID(req tokenvault.TokenRequest, id string) tokenvault.TokenRequest {
	req.ID = id
	return req
}
