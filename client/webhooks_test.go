package client_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tokenvault/tokenvault"
)

// TestWebhooksThroughTheClient: the client's webhook methods answer what
// the Vault's do, with the same types: the secret in the answers of
// create and rotate only, pages by cursor, the same error kinds and
// fields for bad input, another tenant's webhook, a missing permission
// and the limit.
func TestWebhooksThroughTheClient(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	req := tokenvault.WebhookRequest{Name: "orders", URL: "https://hooks.example.com/in",
		Events: []string{tokenvault.EventTokenCreated}, NotifyEmail: "ops@example.com"}
	w, err := p.c.CreateWebhook(ctx, p.mgmt, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Secret, "whsec_") || w.Status != tokenvault.WebhookEnabled {
		t.Fatalf("created %+v", w)
	}
	viaVault, err := p.v.GetWebhook(ctx, p.mgmt, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	viaClient, err := p.c.GetWebhook(ctx, p.mgmt, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viaVault, viaClient, cmpopts.EquateApproxTime(0)); diff != "" || viaClient.Secret != "" {
		t.Errorf("GetWebhook: in process and through the client differ (-vault +client):\n%s", diff)
	}
	want := *w
	want.Secret = ""
	if diff := cmp.Diff(&want, viaClient); diff != "" {
		t.Errorf("GetWebhook is not the created webhook without its secret:\n%s", diff)
	}

	ids := []string{w.ID}
	for range 2 {
		more, err := p.c.CreateWebhook(ctx, p.mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, more.ID)
	}
	slices.Sort(ids)
	var walked []string
	list := tokenvault.ListWebhooksRequest{PageRequest: tokenvault.PageRequest{Size: 1}}
	for range 5 {
		page, err := p.c.ListWebhooks(ctx, p.mgmt, list)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Data {
			if x.Secret != "" {
				t.Errorf("a listed webhook shows its secret")
			}
			walked = append(walked, x.ID)
		}
		if list.Start = page.Pagination.After; list.Start == "" {
			break
		}
	}
	if !slices.Equal(walked, ids) {
		t.Errorf("cursor walk %v, want %v", walked, ids)
	}

	up := req
	up.Name, up.Status, up.NotifyEmail = "renamed", tokenvault.WebhookDisabled, ""
	got, err := p.c.UpdateWebhook(ctx, p.mgmt, w.ID, up)
	if err != nil || got.Name != "renamed" || got.Status != tokenvault.WebhookDisabled || got.NotifyEmail != "" || got.Secret != "" {
		t.Errorf("UpdateWebhook = %+v, %v", got, err)
	}
	rot, err := p.c.RotateWebhookSecret(ctx, p.mgmt, w.ID)
	if err != nil || !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == w.Secret || rot.PreviousSecretUntil == nil {
		t.Errorf("RotateWebhookSecret = %+v, %v", rot, err)
	}
	names, err := p.c.ListWebhookEventTypes(ctx, p.mgmt)
	inProcess, _ := p.v.ListWebhookEventTypes(ctx, p.mgmt)
	if err != nil || !slices.Equal(names, inProcess) || len(names) == 0 {
		t.Errorf("ListWebhookEventTypes = %v, %v; in process %v", names, err, inProcess)
	}

	bad := req
	bad.URL, bad.Events = "ftp://x", []string{"token.exploded"}
	_, errVault := p.v.CreateWebhook(ctx, p.mgmt, bad)
	_, errClient := p.c.CreateWebhook(ctx, p.mgmt, bad)
	if !sameError(errVault, errClient) || tokenvault.ErrorKind(errClient) != tokenvault.Invalid {
		t.Errorf("bad request: in process %s, through the client %s", kindOf(errVault), kindOf(errClient))
	}
	other, err := p.v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.c.GetWebhook(ctx, other.Application.Key, w.ID)
	if tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("another tenant's GetWebhook = %v, want NotFound", err)
	}
	if err := p.c.DeleteWebhook(ctx, other.Application.Key, w.ID); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("another tenant's DeleteWebhook = %v, want NotFound", err)
	}
	_, err = p.c.ListWebhooks(ctx, p.user, tokenvault.ListWebhooksRequest{})
	if tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Errorf("ListWebhooks with a private key = %v, want PermissionDenied", err)
	}
	for len(ids) < tokenvault.DefaultMaxWebhooksPerTenant {
		x, err := p.c.CreateWebhook(ctx, p.mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, x.ID)
	}
	_, errClient = p.c.CreateWebhook(ctx, p.mgmt, req)
	_, errVault = p.v.CreateWebhook(ctx, p.mgmt, req)
	if tokenvault.ErrorKind(errClient) != tokenvault.Conflict || !sameError(errVault, errClient) {
		t.Errorf("past the limit: through the client %s, in process %s", kindOf(errClient), kindOf(errVault))
	}
	if err := p.c.DeleteWebhook(ctx, p.mgmt, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.GetWebhook(ctx, p.mgmt, w.ID); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("GetWebhook after DeleteWebhook = %v", err)
	}
}

// sameError reports whether a and b have the same kind, message and
// fields (the client's error also carries the HTTP status).
func sameError(a, b error) bool {
	ea, ok1 := a.(*tokenvault.Error)
	eb, ok2 := b.(*tokenvault.Error)
	return ok1 && ok2 && ea.Kind == eb.Kind && ea.Message == eb.Message && cmp.Equal(ea.Fields, eb.Fields)
}
