package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestPurposeHeader: PUT /tenants/self/purposes sets the list; a rule
// with purposes answers a read without SVC-PURPOSE with 400 naming the
// field purpose, reveals for its purpose, and refuses a purpose the list
// does not hold; GET /tokens/{id}/access shows the purpose.
func TestPurposeHeader(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "PUT", "/tenants/self/purposes", s.mgmt, map[string]any{"purposes": []map[string]string{
		{"name": "fraud-review", "description": "Reviewing a payment flagged as fraud"}}})
	if r.status != http.StatusOK {
		t.Fatalf("PUT /tenants/self/purposes: %d %s", r.status, r.body)
	}
	var tenant tokenvault.Tenant
	r.json(t, &tenant)
	if len(tenant.Purposes) != 1 || tenant.Purposes[0].Name != "fraud-review" {
		t.Fatalf("the tenant's purposes: %+v", tenant.Purposes)
	}
	if r := s.do(t, "PUT", "/tenants/self/purposes", s.mgmt, map[string]any{"purposes": []map[string]string{
		{"name": "Not A Name", "description": "x"}}}); r.status != http.StatusBadRequest || r.problem(t).Errors["purposes[0].name"] == nil {
		t.Errorf("a bad purpose name: %d %s, want 400 naming purposes[0].name", r.status, r.body)
	}

	r = s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "reviewer", "type": "private",
		"permissions": []string{"token:create"},
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:read", "token:use"}, "purposes": []string{"fraud-review"}}}})
	if r.status != http.StatusCreated {
		t.Fatalf("POST /applications: %d %s", r.status, r.body)
	}
	var app tokenvault.Application
	r.json(t, &app)
	if len(app.Rules) != 1 || len(app.Rules[0].Purposes) != 1 {
		t.Fatalf("the application's rules: %+v", app.Rules)
	}
	r = s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "secret"})
	if r.status != http.StatusCreated {
		t.Fatalf("POST /tokens: %d %s", r.status, r.body)
	}
	var tok tokenvault.Token
	r.json(t, &tok)

	r = s.do(t, "GET", "/tokens/"+tok.ID, string(app.Key), nil)
	if r.status != http.StatusBadRequest || r.problem(t).Errors["purpose"] == nil {
		t.Errorf("GET without SVC-PURPOSE: %d %s, want 400 naming purpose", r.status, r.body)
	}
	r = s.do(t, "GET", "/tokens/"+tok.ID, string(app.Key), nil, "SVC-PURPOSE", "marketing")
	if r.status != http.StatusBadRequest || r.problem(t).Errors["purpose"] == nil {
		t.Errorf("GET for a purpose not on the list: %d %s, want 400 naming purpose", r.status, r.body)
	}
	r = s.do(t, "GET", "/tokens/"+tok.ID, string(app.Key), nil, "SVC-PURPOSE", "fraud-review")
	var got tokenvault.Token
	if r.status != http.StatusOK {
		t.Fatalf("GET for fraud-review: %d %s", r.status, r.body)
	}
	r.json(t, &got)
	if got.Data != "secret" {
		t.Errorf("GET for fraud-review: data %v, want it revealed", got.Data)
	}

	// A proxy: its body is detokenized under the caller's key, for the
	// purpose of the request; SVC-PURPOSE is not forwarded.
	var forwarded []string
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		forwarded = append(forwarded, r.Header.Get("SVC-PURPOSE")+"|"+string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	defer dest.Close()
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL, "require_auth": true})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	body := `{"n": "{{` + tok.ID + `}}"}`
	r = s.do(t, "POST", "/proxy/pay", string(app.Key), body, "SVC-PROXY-KEY", p.Key)
	var proxyErr struct {
		ProxyError httpapi.Problem `json:"proxy_error"`
	}
	r.json(t, &proxyErr)
	if r.status != http.StatusBadRequest || proxyErr.ProxyError.Errors["purpose"] == nil {
		t.Errorf("POST /proxy without SVC-PURPOSE: %d %s, want 400 naming purpose", r.status, r.body)
	}
	r = s.do(t, "POST", "/proxy/pay", string(app.Key), body, "SVC-PROXY-KEY", p.Key, "SVC-PURPOSE", "fraud-review")
	wantStatus(t, "POST /proxy for fraud-review", r, http.StatusOK)
	if len(forwarded) != 1 || forwarded[0] != `|{"n":"secret"}` {
		t.Errorf("the destination got %q, want the data and no SVC-PURPOSE", forwarded)
	}

	r = s.do(t, "GET", "/tokens/"+tok.ID+"/access", s.mgmt, nil)
	var page struct{ Data []tokenvault.TokenAccess }
	r.json(t, &page)
	if len(page.Data) == 0 || page.Data[0].Purpose != "fraud-review" || page.Data[0].Transform != "reveal" {
		t.Errorf("GET /tokens/{id}/access: %s, want the newest access for fraud-review, revealed", r.body)
	}
}
