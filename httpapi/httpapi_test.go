package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/openapitest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// server is a Vault served over HTTP under /vault/, as a host program would
// mount it.
type server struct {
	v    *tokenvault.Vault
	srv  *httptest.Server
	boot *tokenvault.TenantBootstrap
	mgmt string
	// counted, when set, receives the store reads of the next request
	// the handler finishes (countedDo).
	counted atomic.Pointer[chan int64]
}

// newServer serves a new Vault; vaultOptions adjust its Options.
func newServer(t *testing.T, opts httpapi.Options, vaultOptions ...func(*tokenvault.Options)) *server {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	vo := tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true}}
	for _, o := range vaultOptions {
		o(&vo)
	}
	v, err := tokenvault.Open(context.Background(), vo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{v: v, boot: boot, mgmt: string(boot.Application.Key)}
	mux := http.NewServeMux()
	// Every exchange of every test is held to openapi.yaml.
	mux.Handle("/vault/", s.countReads(http.StripPrefix("/vault", openapitest.Mount(t, v, opts, nil))))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// countReads serves h with a context whose store reads a CountingStore
// counts apart (storetest.Counted), and hands their number to countedDo.
func (s *server) countReads(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, reads := storetest.Counted(r.Context())
		h.ServeHTTP(w, r.WithContext(ctx))
		if ch := s.counted.Load(); ch != nil {
			select {
			case *ch <- reads():
			default:
			}
		}
	})
}

// countedDo is do, and returns the store reads of the request: its own,
// not those of the Vault's background work beside it (the Vault's store
// must be a storetest.CountingStore).
func (s *server) countedDo(t *testing.T, method, path, key string, body any) (response, int64) {
	t.Helper()
	ch := make(chan int64, 1)
	s.counted.Store(&ch)
	defer s.counted.Store(nil)
	r := s.do(t, method, path, key, body)
	select {
	case n := <-ch:
		if n == 0 {
			t.Fatalf("%s %s: no read counted: the request's context did not reach the store", method, path)
		}
		return r, n
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %s: the handler did not finish in 30 s", method, path)
		return r, 0
	}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, dst any) {
	t.Helper()
	if err := json.Unmarshal(r.body, dst); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r response) problem(t *testing.T) httpapi.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("error Content-Type = %q, want application/problem+json (body %s)", ct, r.body)
	}
	var p httpapi.Problem
	r.json(t, &p)
	if p.Status != r.status || p.Title == "" || p.Type == "" {
		t.Fatalf("problem %+v does not match status %d", p, r.status)
	}
	return p
}

// do sends a request under /vault with key, and a JSON body unless body is
// a string (sent as is) or nil.
func (s *server) do(t *testing.T, method, path, key string, body any, header ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, s.srv.URL+"/vault"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("SVC-API-KEY", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func wantStatus(t *testing.T, what string, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s = %d %s, want %d", what, r.status, r.body, status)
	}
}

func TestApplicationsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "Checkout", "type": "private", "permissions": []string{"token:create", "token:read"},
	})
	wantStatus(t, "POST /applications", r, http.StatusCreated)
	var app tokenvault.Application
	r.json(t, &app)
	if app.Key == "" || app.ID == "" || app.Type != "private" || app.TenantID != s.boot.Tenant.ID {
		t.Fatalf("created application = %+v", app)
	}

	r = s.do(t, "GET", "/applications/"+app.ID, s.mgmt, nil)
	wantStatus(t, "GET /applications/{id}", r, http.StatusOK)
	var got map[string]any
	r.json(t, &got)
	if got["name"] != "Checkout" || got["key"] != nil {
		t.Errorf("GET /applications/{id} = %s, want the application without key", r.body)
	}

	r = s.do(t, "GET", "/applications/key", string(app.Key), nil)
	wantStatus(t, "GET /applications/key with a private key", r, http.StatusForbidden)
	r = s.do(t, "GET", "/applications/key", s.mgmt, nil)
	wantStatus(t, "GET /applications/key", r, http.StatusOK)
	r.json(t, &got)
	if got["id"] != s.boot.Application.ID {
		t.Errorf("GET /applications/key = %s, want the management application", r.body)
	}

	r = s.do(t, "GET", "/applications?id="+app.ID+"&id="+s.boot.Application.ID+"&size=1", s.mgmt, nil)
	wantStatus(t, "GET /applications", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.Application]
	r.json(t, &page)
	if page.Pagination.After == "" {
		t.Errorf("GET /applications?size=1 of 2 has no cursor: %s", r.body)
	}
	page.Pagination.After = ""
	if page.Pagination != (tokenvault.Pagination{TotalItems: 2, PageNumber: 1, PageSize: 1, TotalPages: 2}) || len(page.Data) != 1 {
		t.Errorf("GET /applications?id=a&id=b&size=1 = %s", r.body)
	}
	if !bytes.Contains(r.body, []byte(`"total_items":2`)) {
		t.Errorf("pagination fields are not snake_case: %s", r.body)
	}

	r = s.do(t, "PUT", "/applications/"+app.ID, s.mgmt, map[string]any{"name": "Checkout 2", "permissions": []string{"token:use"}})
	wantStatus(t, "PUT /applications/{id}", r, http.StatusOK)
	r = s.do(t, "PUT", "/applications/"+app.ID, s.mgmt, map[string]any{"name": "x", "type": "management", "permissions": []string{"log:read"}})
	wantStatus(t, "PUT /applications/{id} with type", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["type"] == nil {
		t.Errorf("PUT with type: errors = %v, want one on type", p.Errors)
	}

	r = s.do(t, "POST", "/applications/"+app.ID+"/regenerate", s.mgmt, nil)
	wantStatus(t, "POST /applications/{id}/regenerate", r, http.StatusOK)
	var regen tokenvault.Application
	r.json(t, &regen)
	if regen.Key == "" || regen.Key == app.Key {
		t.Fatalf("regenerate key = %q", regen.Key)
	}
	wantStatus(t, "old key after regenerate", s.do(t, "GET", "/permissions", string(app.Key), nil), http.StatusUnauthorized)
	wantStatus(t, "new key after regenerate", s.do(t, "GET", "/permissions", string(regen.Key), nil), http.StatusOK)

	r = s.do(t, "DELETE", "/applications/"+app.ID, s.mgmt, nil)
	wantStatus(t, "DELETE /applications/{id}", r, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("DELETE body = %q, want none", r.body)
	}
	wantStatus(t, "GET after delete", s.do(t, "GET", "/applications/"+app.ID, s.mgmt, nil), http.StatusNotFound)
	wantStatus(t, "key after delete", s.do(t, "GET", "/permissions", string(regen.Key), nil), http.StatusUnauthorized)
}

func TestValidationOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{MaxBodyBytes: 512})
	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"malformed", `{"name": `, 400, ""},
		{"not json", `name=x`, 400, ""},
		{"two values", `{"name":"a","type":"private","permissions":["token:read"]} {}`, 400, ""},
		{"empty", ``, 400, ""},
		{"array", `[]`, 400, ""},
		{"wrong type", map[string]any{"name": 5, "type": "private", "permissions": []string{"token:read"}}, 400, "name"},
		{"unknown field", map[string]any{"name": "a", "type": "private", "permissions": []string{"token:read"}, "colour": "red"}, 400, "colour"},
		{"bad permission", map[string]any{"name": "a", "type": "public", "permissions": []string{"token:read"}}, 400, "permissions[0]"},
		{"bad date", map[string]any{"name": "a", "type": "private", "permissions": []string{"token:read"}, "expires_at": "tomorrow"}, 400, ""},
		// The year 10000 in UTC: valid RFC 3339, but no record holds it.
		{"date past 9999", map[string]any{"name": "a", "type": "private", "permissions": []string{"token:read"}, "expires_at": "9999-12-31T23:30:00-01:00"}, 400, "expires_at"},
		{"date at 10000 exactly", map[string]any{"name": "a", "type": "private", "permissions": []string{"token:read"}, "expires_at": "9999-12-31T23:00:00-01:00"}, 400, "expires_at"},
		{"too large", `{"name":"` + strings.Repeat("a", 600) + `"}`, 413, ""},
		// A key given twice: encoding/json would keep the last silently.
		{"duplicate key", `{"name": "a", "type": "private", "permissions": ["token:read"], "name": "b"}`, 400, "name"},
		{"duplicate escaped key", `{"name": "a", "type": "private", "permissions": ["token:read"], "n\u0061me": "b"}`, 400, "name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "POST", "/applications", s.mgmt, tc.body)
			wantStatus(t, tc.name, r, tc.status)
			p := r.problem(t)
			if p.Detail == "" {
				t.Errorf("problem without detail: %s", r.body)
			}
			if tc.field != "" && len(p.Errors[tc.field]) == 0 {
				t.Errorf("errors = %v, want one on %q", p.Errors, tc.field)
			}
		})
	}
	// A fraction where an integer goes says so.
	r := s.do(t, "POST", "/applications", s.mgmt, `{"name": "a", "type": "private", "rules": [{"priority": 1.5, "container": "/", "transform": "reveal", "permissions": ["token:read"]}]}`)
	wantStatus(t, "a fractional priority", r, http.StatusBadRequest)
	if p := r.problem(t); !strings.Contains(strings.Join(p.Errors["rules.priority"], ""), "whole number") {
		t.Errorf("errors = %v, want rules.priority to be a whole number", p.Errors)
	}
	r = s.do(t, "POST", "/applications", s.mgmt, `{}`, "Content-Type", "text/plain")
	wantStatus(t, "text/plain body", r, http.StatusUnsupportedMediaType)
	r.problem(t)

	for _, q := range []string{"page=0", "page=-1", "page=x", "size=0", "size=101", "size=1.5"} {
		r := s.do(t, "GET", "/applications?"+q, s.mgmt, nil)
		wantStatus(t, "GET /applications?"+q, r, http.StatusBadRequest)
		r.problem(t)
	}
	r = s.do(t, "GET", "/applications?size=100&page=99", s.mgmt, nil)
	wantStatus(t, "a page past the end", r, http.StatusOK)
	if !bytes.Contains(r.body, []byte(`"data":[]`)) {
		t.Errorf("a page past the end = %s, want empty data", r.body)
	}
}

func TestAuthOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	p := s.do(t, "GET", "/applications", "", nil)
	wantStatus(t, "no key", p, http.StatusUnauthorized)
	p.problem(t)
	wantStatus(t, "unknown key", s.do(t, "GET", "/applications", "key_nope", nil), http.StatusUnauthorized)
	other, err := s.v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "another tenant's application", s.do(t, "GET", "/applications/"+other.Application.ID, s.mgmt, nil), http.StatusNotFound)
}

func TestRoutesAnswerWithProblems(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/nowhere", s.mgmt, nil)
	wantStatus(t, "unknown route", r, http.StatusNotFound)
	r.problem(t)
	r = s.do(t, "PATCH", "/applications", s.mgmt, nil)
	wantStatus(t, "wrong method", r, http.StatusMethodNotAllowed)
	r.problem(t)
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "POST") || !strings.Contains(allow, "GET") {
		t.Errorf("Allow = %q, want GET and POST", allow)
	}
	// The host's own routes beside the mount still work.
	res, err := http.Get(s.srv.URL + "/health")
	if err != nil || res.StatusCode != 200 {
		t.Errorf("GET /health beside the mount = %v, %v", res, err)
	}
}

func TestLogsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/logs?entity_type=application&size=5", s.mgmt, nil)
	wantStatus(t, "GET /logs", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.Log]
	r.json(t, &page)
	if page.Pagination.TotalItems != 1 || page.Data[0].EntityID != s.boot.Application.ID {
		t.Errorf("GET /logs?entity_type=application = %s", r.body)
	}
	r = s.do(t, "GET", "/logs?start_date=2000-01-01T00:00:00Z&end_date=2001-01-01T00:00:00Z", s.mgmt, nil)
	wantStatus(t, "GET /logs in 2000", r, http.StatusOK)
	r.json(t, &page)
	if page.Pagination.TotalItems != 0 {
		t.Errorf("GET /logs in 2000 = %s", r.body)
	}
	r = s.do(t, "GET", "/logs?start_date=yesterday", s.mgmt, nil)
	wantStatus(t, "GET /logs bad date", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["start_date"] == nil {
		t.Errorf("bad date errors = %v", p.Errors)
	}
	r = s.do(t, "GET", "/logs/entity-types", s.mgmt, nil)
	wantStatus(t, "GET /logs/entity-types", r, http.StatusOK)
	var types []tokenvault.EntityType
	r.json(t, &types)
	if len(types) < 7 {
		t.Errorf("entity types = %s", r.body)
	}
}

func TestTenantOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/tenants/self", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self", r, http.StatusOK)
	var tenant tokenvault.Tenant
	r.json(t, &tenant)
	if tenant.ID != s.boot.Tenant.ID || tenant.Name != "Acme" {
		t.Errorf("GET /tenants/self = %s", r.body)
	}
	wantStatus(t, "POST /tenants/self/rotate-data-key", s.do(t, "POST", "/tenants/self/rotate-data-key", s.mgmt, nil), http.StatusNoContent)
	wantStatus(t, "GET /tenants/self after rotation", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
}

// TestLastManagerOverHTTP: deleting the tenant's only management
// application is a 409 problem, and the key keeps working.
func TestLastManagerOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "DELETE", "/applications/"+s.boot.Application.ID, s.mgmt, nil)
	wantStatus(t, "DELETE the last management application", r, http.StatusConflict)
	r.problem(t)
	r = s.do(t, "GET", "/applications/key", s.mgmt, nil)
	wantStatus(t, "GET /applications/key afterwards", r, http.StatusOK)
}
