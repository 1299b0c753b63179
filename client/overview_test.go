package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
)

// TestOverviewParity: the tenant's statistics and an access preview read
// through the client equal those the Vault answers in process, and a
// preview of bad rules is the same Invalid with the same fields.
func TestOverviewParity(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	if _, err := p.v.CreateToken(ctx, p.user, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/eu/"}}); err != nil {
		t.Fatal(err)
	}
	inProcess, err := p.v.TenantStatistics(ctx, p.mgmt)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := p.c.TenantStatistics(ctx, p.mgmt)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(inProcess, remote); d != "" || remote.Tokens.ByContainer["/eu/"] != 1 {
		t.Errorf("TenantStatistics through the client (-in process +client):\n%s", d)
	}

	req := tokenvault.AccessPreviewRequest{Permissions: []string{tokenvault.PermTokenCreate},
		Rules:   []tokenvault.AccessRule{{Priority: 1, Container: "/eu/", Transform: tokenvault.TransformMask, Permissions: []string{tokenvault.PermTokenRead}}},
		Purpose: "support", Token: tokenvault.AccessPreviewToken{Containers: []string{"/eu/", "/us/"}}}
	want, err := p.v.PreviewAccess(ctx, p.mgmt, req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.c.PreviewAccess(ctx, p.mgmt, req)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PreviewAccess through the client (-in process +client):\n%s", d)
	}
	req.Rules[0].Container = "eu"
	_, inErr := p.v.PreviewAccess(ctx, p.mgmt, req)
	_, remoteErr := p.c.PreviewAccess(ctx, p.mgmt, req)
	var inE, remoteE *tokenvault.Error
	if !errors.As(inErr, &inE) || !errors.As(remoteErr, &remoteE) || inE.Kind != tokenvault.Invalid || remoteE.Kind != inE.Kind ||
		!cmp.Equal(remoteE.Fields, inE.Fields) || len(inE.Fields["rules[0].container"]) == 0 {
		t.Errorf("a bad rule: in process %s, client %s", kindOf(inErr), kindOf(remoteErr))
	}
}
