package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// TestTenantIsolationOverHTTP sends tenant A's keys to every route that
// takes an id, with tenant B's ids: 404 everywhere, and no body mentions B.
func TestTenantIsolationOverHTTP(t *testing.T) {
	t.Parallel()
	box := &testfake.Mailer{}
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
	wh, _ := s.v.CreateWebhook(ctx, bm, tokenvault.WebhookRequest{Name: "beta-hook", URL: "https://example.com/hook", Events: []string{"*"}})
	if tok == nil || inv == nil || f == nil || re == nil || px == nil || wh == nil {
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
		{"GET", "/webhooks/" + wh.ID, s.mgmt, nil, nil},
		{"PUT", "/webhooks/" + wh.ID, s.mgmt, map[string]any{"name": "x", "url": "https://example.com/x", "events": []string{"*"}}, nil},
		{"POST", "/webhooks/" + wh.ID + "/rotate-secret", s.mgmt, nil, nil},
		{"DELETE", "/webhooks/" + wh.ID, s.mgmt, nil, nil},
	}
	for _, rt := range routes {
		r := s.do(t, rt.method, rt.path, rt.key, rt.body, rt.header...)
		if r.status != http.StatusNotFound {
			t.Errorf("%s %s with tenant A's key = %d %s, want 404", rt.method, rt.path, r.status, r.body)
			continue
		}
		for _, secret := range []string{"Beta", "beta", boot.Tenant.ID, wh.Secret[len("whsec_"):]} {
			if strings.Contains(string(r.body), secret) {
				t.Errorf("%s %s: body %s reveals %q", rt.method, rt.path, r.body, secret)
			}
		}
	}
	if got, err := s.v.GetToken(ctx, app.Key, tok.ID); err != nil || len(got.Metadata) != 0 {
		t.Errorf("tenant B's token after the attempts = %+v, %v", got, err)
	}
	if got, err := s.v.GetWebhook(ctx, bm, wh.ID); err != nil || got.Name != "beta-hook" || got.PreviousSecretUntil != nil {
		t.Errorf("tenant B's webhook after the attempts = %+v, %v", got, err)
	}
}

// requestFor is a valid request for a route pattern (so that a refusal is
// about the key, not the body), with the resource ids in ids by the path's
// first segment.
// testRecipient is an age public key whose private key nobody kept.
const testRecipient = "age169saay7hadce9xfcydjn3l4h3ap6p5a69nc2zjera73vmv9n7fpsxty04l"

func requestFor(pattern string, ids map[string]string, nonce string) (method, path string, body any, header []string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{$}", "")
	first, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(path, "/tenants/self"), "/"), "/")
	path = strings.ReplaceAll(path, "{rest...}", "x")
	path = strings.ReplaceAll(path, "{id}", ids[first])
	path = strings.ReplaceAll(path, "{delivery_id}", "0190f5a2-9000-7000-8000-0000000000b2")
	merge := []string{"Content-Type", httpapi.MergePatchType}
	bodies := map[string]any{
		"POST /applications":                         map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}},
		"PUT /applications/{id}":                     map[string]any{"name": "x", "permissions": []string{"token:read"}},
		"POST /tokenize":                             map[string]any{"a": "x"},
		"POST /detokenize":                           map[string]any{"a": "{{ " + ids["tokens"] + " }}"},
		"POST /fpe/encode":                           map[string]any{"transformation": "digits", "values": []string{"123456"}},
		"POST /fpe/decode":                           map[string]any{"transformation": "digits", "values": []string{"123456"}},
		"POST /tokens":                               map[string]any{"type": "token", "data": "x"},
		"POST /token-intents":                        map[string]any{"type": "token", "data": "x"},
		"POST /tokens/search":                        map[string]any{"query": "metadata.x:beta"},
		"POST /tokens/access/search":                 map[string]any{"metadata": map[string]string{"x": "beta"}},
		"PATCH /tokens/{id}":                         `{"metadata": {"a": "b"}}`,
		"POST /sessions/authorize":                   map[string]any{"nonce": nonce, "permissions": []string{"token:read"}},
		"POST /tenants/self/invitations":             map[string]any{"email": "y@example.com"},
		"POST /tenants/invitations/accept":           map[string]any{"token": "x"},
		"POST /reactor-formulas":                     map[string]any{"name": "x", "code": "module.exports = () => 1"},
		"PUT /reactor-formulas/{id}":                 map[string]any{"name": "x", "code": "module.exports = () => 1"},
		"POST /reactors":                             map[string]any{"name": "x", "code": "module.exports = () => 1"},
		"PUT /reactors/{id}":                         map[string]any{"name": "x", "code": "module.exports = () => 2"},
		"PATCH /reactors/{id}":                       `{"name": "x"}`,
		"POST /reactors/{id}/react":                  map[string]any{},
		"POST /proxies":                              map[string]any{"name": "x", "destination_url": "https://example.com"},
		"PUT /proxies/{id}":                          map[string]any{"name": "x", "destination_url": "https://example.com"},
		"PATCH /proxies/{id}":                        `{"name": "x"}`,
		"POST /webhooks":                             map[string]any{"name": "x", "url": "https://example.com/x", "events": []string{"*"}},
		"PUT /webhooks/{id}":                         map[string]any{"name": "x", "url": "https://example.com/x", "events": []string{"*"}},
		"POST /operator/tenants":                     map[string]any{"name": "x"},
		"POST /tenants/self/rotate-data-key":         nil,
		"PUT /tenants/self/purposes":                 map[string]any{"purposes": []any{}},
		"POST /applications/{id}/regenerate":         nil,
		"POST /applications/{id}/unfreeze":           nil,
		"POST /decoys":                               map[string]any{"application_id": ids["applications"], "token": map[string]any{"type": "token", "data": "x"}},
		"POST /tenants/self/invitations/{id}/resend": nil,
		"PUT /tenants/self/approval-policy":          map[string]any{"required": 1, "approvers": []string{ids["applications"]}, "operations": []string{"application.create_management"}},
		"POST /approvals/{id}/approve":               nil,
		"POST /approvals/{id}/reject":                map[string]any{"reason": "x"},
		"POST /tokens/export":                        map[string]any{"recipient": testRecipient},
		"POST /applications/preview-access":          map[string]any{"application_id": ids["applications"]},
		"POST /tokens/import":                        `{"id": "` + ids["tokens"] + `", "type": "token", "data": "x"}`,
	}
	body = bodies[pattern]
	if pattern == "POST /tokens/import" {
		header = []string{"Content-Type", "application/x-ndjson"}
	}
	if method == "PATCH" && !strings.HasPrefix(path, "/proxy") {
		header = merge
	}
	return method, path, body, header
}

// TestTenantIsolationEveryRoute walks the handler's route list: tenant
// A's keys (management, and a private key that may do anything to any
// token) on every route, naming tenant B's resources wherever a route
// takes an id, and B's proxy key on proxy invocation. Routes with an id
// answer 404 or 403, never 2xx; no answer on any route holds B's name or
// ids. And the operator key is refused on every tenant route (401).
func TestTenantIsolationEveryRoute(t *testing.T) {
	t.Parallel()
	box := &testfake.Mailer{}
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) { o.Mailer = box })
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
	pub, err := s.v.CreateApplication(ctx, bm, tokenvault.CreateApplicationRequest{Name: "beta-web", Type: tokenvault.Public, Permissions: []string{"token:create"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.v.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := s.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "beta-secret", Metadata: map[string]string{"x": "beta"}})
	inv, _ := s.v.CreateInvitation(ctx, bm, tokenvault.CreateInvitationRequest{Email: "beta@example.com"})
	f, _ := s.v.CreateFormula(ctx, bm, tokenvault.FormulaRequest{Name: "beta-formula", Code: "module.exports = () => 1"})
	re, _ := s.v.CreateReactor(ctx, bm, tokenvault.CreateReactorRequest{Name: "beta-reactor", Code: "module.exports = () => 1"})
	px, _ := s.v.CreateProxy(ctx, bm, tokenvault.ProxyRequest{Name: "beta-proxy", DestinationURL: "https://example.com"})
	intent, _ := s.v.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: "token", Data: "beta-intent"})
	wh, _ := s.v.CreateWebhook(ctx, bm, tokenvault.WebhookRequest{Name: "beta-hook", URL: "https://example.com/hook", Events: []string{"*"}})
	// A change of tenant B waiting for approval: a management key its
	// policy holds to the approval of another management application.
	approver, _ := s.v.CreateApplication(ctx, bm, tokenvault.CreateApplicationRequest{Name: "beta-approver", Type: tokenvault.Management,
		Permissions: []string{"application:read"}})
	var held *tokenvault.ApprovalRequired
	if approver != nil {
		if _, err := s.v.SetApprovalPolicy(ctx, bm, tokenvault.ApprovalPolicy{Required: 1, Approvers: []string{approver.ID},
			Operations: []string{tokenvault.ApprovalCreateManagement}}); err != nil {
			t.Fatal(err)
		}
		_, err := s.v.CreateApplication(ctx, bm, tokenvault.CreateApplicationRequest{Name: "beta-ops", Type: tokenvault.Management,
			Permissions: []string{"application:read"}})
		errors.As(err, &held)
	}
	exp, _ := s.v.ExportTokens(ctx, bm, tokenvault.ExportRequest{Recipient: testRecipient}, io.Discard)
	if tok == nil || inv == nil || f == nil || re == nil || px == nil || intent == nil || wh == nil || held == nil || exp == nil {
		t.Fatal("tenant B setup failed")
	}
	ids := map[string]string{
		"applications": app.ID, "tokens": tok.ID, "members": boot.Owner.ID, "invitations": inv.ID,
		"reactor-formulas": f.ID, "reactors": re.ID, "proxies": px.ID, "operator": boot.Tenant.ID,
		"token-intents": intent.ID, "webhooks": wh.ID, "approvals": held.Change.ID, "exports": exp.ID,
		// Subjects are a tenant's names: tenant A holds nothing of B's.
		"subjects": "beta-subject",
	}
	secrets := []string{"Beta", "beta", boot.Tenant.ID, app.ID, pub.ID, tok.ID, boot.Owner.ID, inv.ID, f.ID, re.ID, px.ID, intent.ID,
		wh.ID, wh.Secret[len("whsec_"):], approver.ID, held.Change.ID, exp.ID}
	_, user := s.app(t, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:read", "token:update", "token:delete", "token:use", "token:search", "token:create"}}}})

	for _, pattern := range httpapi.Routes(httpapi.New(nil, httpapi.Options{})) {
		method, path, body, header := requestFor(pattern, ids, sess.Nonce)
		if strings.HasPrefix(path, "/operator/") {
			continue // TestOperatorKeyIsolation
		}
		withID := strings.Contains(pattern, "{id}")
		if strings.Contains(pattern, "{id}") && ids[strings.Split(strings.TrimPrefix(strings.TrimPrefix(path, "/tenants/self"), "/"), "/")[0]] == "" {
			t.Fatalf("%s: no resource of tenant B for this route; add one", pattern)
		}
		if strings.HasPrefix(path, "/proxy") {
			header = append(header, "SVC-PROXY-KEY", px.Key)
			withID = true // B's proxy
		}
		keys := []string{s.mgmt, user}
		if pattern == "DELETE /tenants/self" {
			// It deletes tenant A itself and names nothing of B (B's
			// data is checked below); TestDeleteOwnTenantOverHTTP.
			keys = nil
		}
		for _, key := range keys {
			r := s.do(t, method, path, key, body, header...)
			if withID && r.status != http.StatusNotFound && r.status != http.StatusForbidden && r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with a key of tenant A = %d %s, want 404 or 403", method, path, r.status, r.body)
			}
			sent, _ := json.Marshal(body)
			for _, secret := range secrets {
				// An id the caller sent may be quoted back (detokenize:
				// "token ... does not exist"); that tells it nothing.
				if strings.Contains(string(r.body), secret) && !strings.Contains(string(sent), secret) {
					t.Errorf("%s %s with a key of tenant A: body %.300s reveals %q", method, path, r.body, secret)
				}
			}
		}
		if keylessRoutes[pattern] || strings.HasPrefix(path, "/proxy") {
			continue
		}
		if r := s.do(t, method, path, operatorKey, body, header...); r.status != http.StatusUnauthorized {
			t.Errorf("%s %s with the operator key = %d %s, want 401", method, path, r.status, r.body)
		}
	}
	if got, err := s.v.GetToken(ctx, app.Key, tok.ID); err != nil || got.Metadata["x"] != "beta" || len(got.Metadata) != 1 {
		t.Errorf("tenant B's token after the attempts = %+v, %v", got, err)
	}
	if _, err := s.v.GetTokenIntent(ctx, pub.Key, intent.ID); err != nil {
		t.Errorf("tenant B's token intent after the attempts: %v", err)
	}
	if err := s.v.AuthorizeSession(ctx, app.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce, Permissions: []string{"token:create"}}); err != nil {
		t.Errorf("tenant B's session nonce after the attempts: %v", err)
	}
}
