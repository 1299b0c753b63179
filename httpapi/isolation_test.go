package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestTenantIsolationOverHTTP sends tenant A's keys to every route that
// takes an id, with tenant B's ids: 404 everywhere, and no body mentions B.
func TestTenantIsolationOverHTTP(t *testing.T) {
	box := &mailbox{}
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Mailer = box })
	ctx := context.Background()
	boot, err := s.v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Beta Corp"})
	if err != nil {
		t.Fatal(err)
	}
	bm := boot.Application.Key
	app, err := s.v.CreateApplication(ctx, bm, tokenvault.CreateApplicationRequest{Name: "beta-app", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := s.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "beta-secret"})
	inv, _ := s.v.CreateInvitation(ctx, bm, tokenvault.CreateInvitationRequest{Email: "beta@example.com"})
	f, _ := s.v.CreateFormula(ctx, bm, tokenvault.FormulaRequest{Name: "beta-formula", Code: "module.exports = () => 1"})
	re, _ := s.v.CreateReactor(ctx, bm, tokenvault.CreateReactorRequest{Name: "beta-reactor", Code: "module.exports = () => 1"})
	px, _ := s.v.CreateProxy(ctx, bm, tokenvault.ProxyRequest{Name: "beta-proxy", DestinationURL: "https://example.com"})
	if tok == nil || inv == nil || f == nil || re == nil || px == nil {
		t.Fatal("tenant B setup failed")
	}
	_, user := s.app(t, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:read", "token:update", "token:delete", "token:use"}}}})
	merge := []string{"Content-Type", httpapi.MergePatchType}
	routes := []struct {
		method, path, key string
		body              any
		header            []string
	}{
		{"GET", "/applications/" + app.ID, s.mgmt, nil, nil},
		{"PUT", "/applications/" + app.ID, s.mgmt, map[string]any{"name": "x", "permissions": []string{"token:read"}}, nil},
		{"POST", "/applications/" + app.ID + "/regenerate", s.mgmt, nil, nil},
		{"DELETE", "/applications/" + app.ID, s.mgmt, nil, nil},
		{"GET", "/tokens/" + tok.ID, user, nil, nil},
		{"PATCH", "/tokens/" + tok.ID, user, `{"metadata": {"a": "b"}}`, merge},
		{"DELETE", "/tokens/" + tok.ID, user, nil, nil},
		{"DELETE", "/tenants/self/members/" + boot.Owner.ID, s.mgmt, nil, nil},
		{"GET", "/tenants/self/invitations/" + inv.ID, s.mgmt, nil, nil},
		{"POST", "/tenants/self/invitations/" + inv.ID + "/resend", s.mgmt, nil, nil},
		{"DELETE", "/tenants/self/invitations/" + inv.ID, s.mgmt, nil, nil},
		{"GET", "/reactor-formulas/" + f.ID, s.mgmt, nil, nil},
		{"PUT", "/reactor-formulas/" + f.ID, s.mgmt, map[string]any{"name": "x", "code": "module.exports = () => 1"}, nil},
		{"DELETE", "/reactor-formulas/" + f.ID, s.mgmt, nil, nil},
		{"GET", "/reactors/" + re.ID, s.mgmt, nil, nil},
		{"PUT", "/reactors/" + re.ID, s.mgmt, map[string]any{"name": "x", "code": "module.exports = () => 2"}, nil},
		{"PATCH", "/reactors/" + re.ID, s.mgmt, `{"name": "x"}`, merge},
		{"DELETE", "/reactors/" + re.ID, s.mgmt, nil, nil},
		{"POST", "/reactors/" + re.ID + "/react", user, map[string]any{}, nil},
		{"GET", "/proxies/" + px.ID, s.mgmt, nil, nil},
		{"PUT", "/proxies/" + px.ID, s.mgmt, map[string]any{"name": "x", "destination_url": "https://example.com"}, nil},
		{"PATCH", "/proxies/" + px.ID, s.mgmt, `{"name": "x"}`, merge},
		{"DELETE", "/proxies/" + px.ID, s.mgmt, nil, nil},
	}
	for _, rt := range routes {
		r := s.do(t, rt.method, rt.path, rt.key, rt.body, rt.header...)
		if r.status != http.StatusNotFound {
			t.Errorf("%s %s with tenant A's key = %d %s, want 404", rt.method, rt.path, r.status, r.body)
			continue
		}
		for _, secret := range []string{"Beta", "beta", boot.Tenant.ID} {
			if strings.Contains(string(r.body), secret) {
				t.Errorf("%s %s: body %s reveals %q", rt.method, rt.path, r.body, secret)
			}
		}
	}
	if got, err := s.v.GetToken(ctx, app.Key, tok.ID); err != nil || len(got.Metadata) != 0 {
		t.Errorf("tenant B's token after the attempts = %+v, %v", got, err)
	}
}
