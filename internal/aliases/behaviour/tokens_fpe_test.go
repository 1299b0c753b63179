package aliases_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

const fpeCardID = `{{ data.number | fpe: "card_bin_last4" }}`

// TestFPETokenIDs: an id derived with fpe is the same for the same value
// in a tenant (a second create is 409; with deduplication the token comes
// back), differs across tenants, keeps BIN and last four, fails the Luhn
// check, names the token everywhere an id does, and survives a data key
// rotation; it never equals what FPEEncode gives for the same value.
func TestFPETokenIDs(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.Revealer(t, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermFPEEncode)
	req := vaulttest.CardRequest("4242424242424242")
	req.ID = fpeCardID
	tok, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.ID) != 16 || tok.ID[:6] != "424242" || tok.ID[12:] != "4242" || tok.ID == "4242424242424242" || fpeLuhnValid(tok.ID) {
		t.Fatalf("id %q", tok.ID)
	}
	got, err := e.V.GetToken(ctx, app.Key, tok.ID)
	if err != nil || got.ID != tok.ID || got.Type != "card" {
		t.Fatalf("GetToken(%s) = %+v, %v", tok.ID, got, err)
	}
	det, err := e.V.Detokenize(ctx, app.Key, map[string]any{"n": "{{ " + tok.ID + " | json: '$.number' }}"})
	if err != nil || det.(map[string]any)["n"] == nil {
		t.Errorf("Detokenize by the fpe id = %v, %v", det, err)
	}
	_, err = e.V.CreateToken(ctx, app.Key, req)
	vaulttest.WantKind(t, "the same card again", err, tokenvault.Conflict)
	req.DeduplicateToken = true
	again, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil || again.ID != tok.ID {
		t.Fatalf("deduplicated = %+v, %v; want %s", again, err, tok.ID)
	}
	req.DeduplicateToken = false

	enc, err := e.V.FPEEncode(ctx, app.Key, tokenvault.FPERequest{Transformation: "card_bin_last4", Values: []string{"4242424242424242"}})
	if err != nil || enc.Values[0] == tok.ID {
		t.Errorf("FPEEncode gives %v, %v; the token id is %s (must differ)", enc, err, tok.ID)
	}

	if err := e.V.RotateDataKey(ctx, e.Mgmt); err != nil {
		t.Fatal(err)
	}
	other := vaulttest.CardRequest("5555555555554444")
	other.ID = fpeCardID
	o1, err := e.V.CreateToken(ctx, app.Key, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.V.DeleteToken(ctx, e.Mgmt, o1.ID); err == nil {
		t.Fatal("a management key deleted a token")
	}
	del := e.App(t, tokenvault.Private, tokenvault.PermTokenDelete)
	if err := e.V.DeleteToken(ctx, del.Key, o1.ID); err != nil {
		t.Fatal(err)
	}
	o2, err := e.V.CreateToken(ctx, app.Key, other)
	if err != nil || o2.ID != o1.ID {
		t.Errorf("after rotation and delete: id %v, %v; want %s", o2, err, o1.ID)
	}

	tenant := e.Tenant(t, "Other")
	oapp, err := e.V.CreateApplication(ctx, tenant.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "p", Type: tokenvault.Private, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ot, err := e.V.CreateToken(ctx, oapp.Key, req)
	if err != nil || ot.ID == tok.ID {
		t.Errorf("another tenant's id %v, %v; first tenant's %s", ot, err, tok.ID)
	}
}

// TestFPETokenIDRefusals: an id expression that prints data in clear, a
// value the transformation refuses, an id breaking the id rules, and a
// key that may not read where it creates are refused before anything is
// stored, never quoting the data.
func TestFPETokenIDRefusals(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.Revealer(t, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	for name, c := range map[string]struct {
		id, value string
		kind      tokenvault.Kind
	}{
		"clear data":     {`{{ data.number }}`, "4242424242424242", tokenvault.Invalid},
		"after fpe":      {`{{ data.number | fpe: "card" | last4 }}`, "4242424242424242", tokenvault.Invalid},
		"unknown name":   {`{{ data.number | fpe: "hex" }}`, "4242424242424242", tokenvault.Invalid},
		"not a card":     {`{{ data.number | fpe: "card" }}`, "4242424242424241", tokenvault.Invalid},
		"forbidden char": {`a/{{ data.number | fpe: "digits" }}`, "4242424242424242", tokenvault.Invalid},
	} {
		req := vaulttest.CardRequest(c.value)
		req.ID = c.id
		_, err := e.V.CreateToken(ctx, app.Key, req)
		vaulttest.WantKind(t, name, err, c.kind)
		if !strings.Contains(err.Error(), "id") || strings.Contains(err.Error(), "42424242") {
			t.Errorf("%s: %v", name, err)
		}
	}
	pub := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
	req := vaulttest.CardRequest("4242424242424242")
	req.ID = fpeCardID
	_, err := e.V.CreateToken(ctx, pub.Key, req)
	vaulttest.WantKind(t, "a key that may not read", err, tokenvault.PermissionDenied)
	list, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(list.Data) != 0 {
		t.Errorf("tokens stored by refused requests: %+v, %v", list, err)
	}
}

// TestFPETokenIDTweakFromMetadata: fpe_tweaked reads its tweak from the
// token's metadata: the same number in two regions gets two ids, and a
// token without the field is refused.
func TestFPETokenIDTweakFromMetadata(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.Revealer(t, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	ids := map[string]string{}
	for _, region := range []string{"eu", "us"} {
		req := vaulttest.CardRequest("4242424242424242")
		req.ID = `{{ data.number | fpe_tweaked: "card_last4", "metadata.region" }}`
		req.Metadata = map[string]string{"region": region}
		tok, err := e.V.CreateToken(ctx, app.Key, req)
		if err != nil {
			t.Fatal(err)
		}
		ids[region] = tok.ID
	}
	if ids["eu"] == ids["us"] || ids["eu"][12:] != "4242" {
		t.Errorf("ids %v", ids)
	}
	req := vaulttest.CardRequest("4242424242424242")
	req.ID = `{{ data.number | fpe_tweaked: "card_last4", "metadata.region" }}`
	_, err := e.V.CreateToken(ctx, app.Key, req)
	vaulttest.WantKind(t, "no region", err, tokenvault.Invalid)
}

// TestFPEDisplayRule: an fpe id shows at most a card's first six digits
// and last four, so the display rule holds the mask to the rest, when the
// token is created and in every later patch: a mask showing the first ten
// digits is refused, beside an fpe id or not.
func TestFPEDisplayRule(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:update")
	firstTen := map[string]any{"number": "{{ data.number | slice: 0, 10 }}"}
	req := aliasCardRequest(vaulttest.Visa, fpeCardID)
	req.Mask = firstTen
	_, err := e.V.CreateToken(ctx, app.Key, req)
	vaulttest.WantField(t, err, "mask")
	if !strings.Contains(strings.Join(fieldsOf(err)["mask"], ""), "PCI DSS") {
		t.Errorf("err = %v, want the display rule named", fieldsOf(err))
	}
	tok, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, fpeCardID))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"mask": {"number": "{{ data.number | slice: 0, 10 }}"}}`))
	vaulttest.WantField(t, err, "mask")
	plain, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest("5555555555554444", ""))
	if err != nil {
		t.Fatal(err)
	}
	// A card's mask is held to the rule whatever its id.
	_, err = e.V.UpdateToken(ctx, app.Key, plain.ID, json.RawMessage(`{"mask": {"number": "{{ data.number | slice: 0, 10 }}"}}`))
	vaulttest.WantField(t, err, "mask")
}
