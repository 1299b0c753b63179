package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestOverviewOverHTTP: GET /tenants/self/statistics answers the
// management key the tenant's figures (a token key: 403), and POST
// /applications/preview-access a decision per token permission (bad
// rules: 400 naming the field); both answers match the OpenAPI document
// (openapitest checks every answer of the mounted API).
func TestOverviewOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "writer", "type": "private",
		"permissions": []string{"token:create"},
		"rules":       []map[string]any{{"priority": 1, "container": "/pci/", "transform": "reveal", "permissions": []string{"token:read"}}}})
	wantStatus(t, "POST /applications", r, http.StatusCreated)
	var app tokenvault.Application
	r.json(t, &app)
	wantStatus(t, "POST /tokens", s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "x", "containers": []string{"/pci/"}}), http.StatusCreated)

	r = s.do(t, "GET", "/tenants/self/statistics", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/statistics", r, http.StatusOK)
	var stats tokenvault.TenantStatistics
	r.json(t, &stats)
	if stats.Tokens.Total != 1 || stats.Tokens.ByContainer["/pci/"] != 1 || stats.Applications != 2 {
		t.Errorf("GET /tenants/self/statistics = %s, want 1 token in /pci/ and 2 applications", r.body)
	}
	wantStatus(t, "GET /tenants/self/statistics with a token key", s.do(t, "GET", "/tenants/self/statistics", string(app.Key), nil), http.StatusForbidden)

	r = s.do(t, "POST", "/applications/preview-access", s.mgmt, map[string]any{"application_id": app.ID,
		"token": map[string]any{"containers": []string{"/pci/high/"}}})
	wantStatus(t, "POST /applications/preview-access", r, http.StatusOK)
	var preview tokenvault.AccessPreview
	r.json(t, &preview)
	if d := preview.Decisions[1]; d.Permission != "token:read" || !d.Allowed || d.Transform != "reveal" || d.Containers[0].Rule == nil {
		t.Errorf("preview token:read = %+v, want reveal by the rule on /pci/", d)
	}
	r = s.do(t, "POST", "/applications/preview-access", s.mgmt, map[string]any{
		"rules": []map[string]any{{"priority": 1, "container": "pci", "transform": "reveal", "permissions": []string{"token:read"}}}})
	wantStatus(t, "POST /applications/preview-access with a bad rule", r, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors["rules[0].container"]) == 0 {
		t.Errorf("preview with a bad rule: %s, want an error on rules[0].container", r.body)
	}
}
