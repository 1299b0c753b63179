package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestAllowedOriginsOverHTTP: a public application's allowed_origins are
// created normalized, read, kept by a PUT that leaves them out and
// replaced or removed by one that names them; another type, a malformed
// origin or too many are a 400 naming the field. Every exchange is held
// to openapi.yaml (newServer).
func TestAllowedOriginsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "Checkout page", "type": "public",
		"permissions": []string{"token:create"}, "allowed_origins": []string{"HTTPS://Shop.Example:443", "http://127.0.0.1:8081"}})
	wantStatus(t, "POST /applications (public, origins)", r, http.StatusCreated)
	var app tokenvault.Application
	r.json(t, &app)
	if strings.Join(app.AllowedOrigins, " ") != "https://shop.example http://127.0.0.1:8081" {
		t.Fatalf("created with allowed_origins %q", app.AllowedOrigins)
	}
	origins := func(what string) string {
		t.Helper()
		r := s.do(t, "GET", "/applications/"+app.ID, s.mgmt, nil)
		wantStatus(t, what, r, http.StatusOK)
		var got tokenvault.Application
		r.json(t, &got)
		return strings.Join(got.AllowedOrigins, " ")
	}
	if got := origins("GET"); got != "https://shop.example http://127.0.0.1:8081" {
		t.Errorf("GET /applications/{id}: allowed_origins %q", got)
	}
	wantStatus(t, "PUT without allowed_origins", s.do(t, "PUT", "/applications/"+app.ID, s.mgmt,
		map[string]any{"name": "Checkout", "permissions": []string{"token:create"}}), http.StatusOK)
	if got := origins("GET after PUT"); got != "https://shop.example http://127.0.0.1:8081" {
		t.Errorf("a PUT without allowed_origins left %q, want them kept", got)
	}
	wantStatus(t, "PUT with allowed_origins", s.do(t, "PUT", "/applications/"+app.ID, s.mgmt,
		map[string]any{"name": "Checkout", "permissions": []string{"token:create"}, "allowed_origins": []string{"https://pay.example"}}), http.StatusOK)
	if got := origins("GET after PUT"); got != "https://pay.example" {
		t.Errorf("a PUT with allowed_origins left %q", got)
	}
	r = s.do(t, "PUT", "/applications/"+app.ID, s.mgmt, map[string]any{"name": "Checkout", "permissions": []string{"token:create"}, "allowed_origins": []string{}})
	wantStatus(t, "PUT with no allowed_origins", r, http.StatusOK)
	if strings.Contains(string(r.body), "allowed_origins") {
		t.Errorf("an application without allowed origins shows them: %s", r.body)
	}

	many := make([]string, 21)
	for i := range many {
		many[i] = "https://s" + strings.Repeat("x", i+1) + ".example"
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"private", map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}, "allowed_origins": []string{"https://shop.example"}}, "allowed_origins"},
		{"path", map[string]any{"name": "x", "type": "public", "permissions": []string{"token:create"}, "allowed_origins": []string{"https://shop.example/checkout"}}, "allowed_origins[0]"},
		{"wildcard", map[string]any{"name": "x", "type": "public", "permissions": []string{"token:create"}, "allowed_origins": []string{"*"}}, "allowed_origins[0]"},
		{"no scheme", map[string]any{"name": "x", "type": "public", "permissions": []string{"token:create"}, "allowed_origins": []string{"shop.example"}}, "allowed_origins[0]"},
		{"too many", map[string]any{"name": "x", "type": "public", "permissions": []string{"token:create"}, "allowed_origins": many}, "allowed_origins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "POST", "/applications", s.mgmt, tc.body)
			wantStatus(t, "POST /applications", r, http.StatusBadRequest)
			if p := r.problem(t); p.Errors[tc.field] == nil {
				t.Errorf("errors %v, want one at %s", p.Errors, tc.field)
			}
		})
	}
	r = s.do(t, "PUT", "/applications/"+s.boot.Application.ID, s.mgmt, map[string]any{"name": "Owner",
		"permissions": s.boot.Application.Permissions, "allowed_origins": []string{"https://shop.example"}})
	wantStatus(t, "PUT origins on a management application", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["allowed_origins"] == nil {
		t.Errorf("errors %v, want one at allowed_origins", p.Errors)
	}
}
