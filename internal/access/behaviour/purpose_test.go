package access_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// wantPurposeInvalid fails unless err is Invalid naming the field
// "purpose".
func wantPurposeInvalid(t *testing.T, what string, err error) {
	t.Helper()
	var e *tokenvault.Error
	if !errors.As(err, &e) || e.Kind != tokenvault.Invalid || len(e.Fields["purpose"]) == 0 {
		t.Errorf("%s: %v; want Invalid naming the field purpose", what, err)
	}
}

// TestPurposeOfAccess: rules with purposes reveal for one purpose and mask
// for another; a read of one token without a purpose is Invalid (field
// purpose), as is a purpose the tenant's list does not hold; a listed
// purpose no rule names is denied; lists leave the token out without a
// purpose; every access's line names its purpose in the access report.
func TestPurposeOfAccess(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tenant, err := e.V.SetPurposes(ctx, e.Mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
			{Name: "fraud-review", Description: "Reviewing a payment flagged as fraud"},
			{Name: "support", Description: "Answering the card holder"},
			{Name: "billing", Description: "Invoicing"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(tenant.Purposes) != 3 {
			t.Fatalf("SetPurposes: %+v, want 3 purposes", tenant.Purposes)
		}
		app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: "reviewer", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
			Rules: []tokenvault.AccessRule{
				{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{tokenvault.PermTokenRead, tokenvault.PermTokenUse},
					Purposes: []string{"fraud-review"}},
				{Priority: 2, Container: "/pci/", Transform: "mask", Permissions: []string{tokenvault.PermTokenRead},
					Purposes: []string{"support"}},
			}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.V.GetApplication(ctx, e.Mgmt, app.ID)
		if err != nil || !slices.Equal(got.Rules[0].Purposes, []string{"fraud-review"}) {
			t.Fatalf("the stored rules: %+v, %v; want the purposes kept", got, err)
		}
		tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "4111111111111111",
			Containers: []string{"/pci/"}, Mask: "{{ data | reveal_last: 4 }}"})
		if err != nil {
			t.Fatal(err)
		}

		_, err = e.V.GetToken(ctx, app.Key, tok.ID)
		wantPurposeInvalid(t, "GetToken without a purpose", err)
		_, err = e.V.GetToken(tokenvault.WithPurpose(ctx, "marketing"), app.Key, tok.ID)
		wantPurposeInvalid(t, "GetToken for a purpose not on the list", err)
		_, err = e.V.GetToken(tokenvault.WithPurpose(ctx, "billing"), app.Key, tok.ID)
		vaulttest.WantKind(t, "GetToken for a listed purpose no rule names", err, tokenvault.PermissionDenied)

		revealed, err := e.V.GetToken(tokenvault.WithPurpose(ctx, "fraud-review"), app.Key, tok.ID)
		if err != nil || revealed.Data != "4111111111111111" {
			t.Fatalf("GetToken for fraud-review = %+v, %v; want the data revealed", revealed, err)
		}
		masked, err := e.V.GetToken(tokenvault.WithPurpose(ctx, "support"), app.Key, tok.ID)
		if err != nil || masked.Data == "4111111111111111" || masked.Data == nil {
			t.Fatalf("GetToken for support = %+v, %v; want the data masked", masked, err)
		}

		doc := map[string]any{"card": "{{ " + tok.ID + " }}"}
		_, err = e.V.Detokenize(ctx, app.Key, doc)
		wantPurposeInvalid(t, "Detokenize without a purpose", err)
		out, err := e.V.Detokenize(tokenvault.WithPurpose(ctx, "fraud-review"), app.Key, doc)
		if err != nil || out.(map[string]any)["card"] != "4111111111111111" {
			t.Fatalf("Detokenize for fraud-review = %v, %v; want the data", out, err)
		}

		page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{Container: "/pci/"})
		if err != nil || len(page.Data) != 0 {
			t.Errorf("ListTokens without a purpose = %+v, %v; want the token left out", page, err)
		}
		page, err = e.V.ListTokens(tokenvault.WithPurpose(ctx, "support"), app.Key, tokenvault.ListTokensRequest{Container: "/pci/"})
		if err != nil || len(page.Data) != 1 {
			t.Errorf("ListTokens for support = %+v, %v; want the token", page, err)
		}

		report, err := e.V.TokenAccess(ctx, e.Mgmt, tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		var purposes []string
		for _, a := range report.Data {
			purposes = append(purposes, a.Purpose+"/"+a.Transform)
		}
		for _, want := range []string{"fraud-review/reveal", "support/mask"} {
			if !slices.Contains(purposes, want) {
				t.Errorf("TokenAccess: purposes/transforms %v, want %s among them", purposes, want)
			}
		}

		// Taking a purpose off the list: a call naming it is refused.
		if _, err := e.V.SetPurposes(ctx, e.Mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
			{Name: "support", Description: "Answering the card holder"}}}); err != nil {
			t.Fatal(err)
		}
		_, err = e.V.GetToken(tokenvault.WithPurpose(ctx, "fraud-review"), app.Key, tok.ID)
		wantPurposeInvalid(t, "GetToken for a purpose taken off the list", err)
	})
}

// TestPurposeValidation: a rule's purposes and a tenant's list are
// checked, field by field.
func TestPurposeValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "bad", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{tokenvault.PermTokenRead}, Purposes: []string{"Fraud Review", "a", "a"}}}})
	var te *tokenvault.Error
	if !errors.As(err, &te) || len(te.Fields["rules[0].purposes"]) != 2 {
		t.Errorf("a rule with a bad and a repeated purpose: %v; want two errors at rules[0].purposes", err)
	}
	_, err = e.V.SetPurposes(ctx, e.Mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
		{Name: "ok", Description: ""}, {Name: "ok", Description: "twice"}, {Name: "-x", Description: "x"}}})
	if !errors.As(err, &te) || len(te.Fields["purposes[0].description"]) != 1 ||
		len(te.Fields["purposes[1].name"]) != 1 || len(te.Fields["purposes[2].name"]) != 1 {
		t.Errorf("a bad list: %v; want errors at purposes[0].description, [1].name and [2].name", err)
	}
	reader := e.App(t, tokenvault.Management, tokenvault.PermTenantRead)
	_, err = e.V.SetPurposes(ctx, reader.Key, tokenvault.SetPurposesRequest{})
	vaulttest.WantKind(t, "SetPurposes without tenant:update", err, tokenvault.PermissionDenied)
}
