package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

const operatorKey = "op_test-operator-key-0123456789abcdef"

// keylessRoutes take no SVC-API-KEY (proxy invocation takes a proxy key).
var keylessRoutes = map[string]bool{
	"GET /{$}":                         true,
	"GET /openapi.json":                true,
	"GET /audit/keys":                  true,
	"POST /tenants/invitations/accept": true,
}

// concretePath fills a route pattern's parameters: each {name} with id,
// a {name...} wildcard with "x".
func concretePath(pattern, id string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{$}", "")
	for {
		i := strings.Index(path, "{")
		if i < 0 {
			return method, path
		}
		j := strings.Index(path[i:], "}") + i
		v := id
		if strings.HasSuffix(path[i:j], "...") {
			v = "x"
		}
		path = path[:i] + v + path[j+1:]
	}
}

func TestOperatorTenantsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey})
	r := s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{
		"name": "Globex", "owner": map[string]any{"email": "hank@example.com", "first_name": "Hank"}, "application_name": "Admin",
	})
	wantStatus(t, "POST /operator/tenants", r, http.StatusCreated)
	var boot tokenvault.TenantBootstrap
	r.json(t, &boot)
	if boot.Tenant.Name != "Globex" || boot.Application.Key == "" || boot.Application.Name != "Admin" ||
		boot.Owner.Role != tokenvault.RoleOwner || boot.Owner.User.Email != "hank@example.com" {
		t.Fatalf("POST /operator/tenants = %s", r.body)
	}
	wantStatus(t, "the new tenant's key", s.do(t, "GET", "/tenants/self", string(boot.Application.Key), nil), http.StatusOK)
	wantStatus(t, "POST /operator/tenants with only a name", s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{"name": "Initech"}), http.StatusCreated)

	r = s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{"name": "x", "owner": map[string]any{"id": "0190a000-0000-7000-8000-000000000000"}})
	wantStatus(t, "POST /operator/tenants with an owner id", r, http.StatusBadRequest)
	wantStatus(t, "POST /operator/tenants without a name", s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{}), http.StatusBadRequest)
	r = s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{"name": "x", "owner": map[string]any{"picture": "javascript:alert(1)"}})
	wantStatus(t, "POST /operator/tenants with a javascript: picture", r, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors["owner.picture"]) == 0 {
		t.Errorf("errors = %v, want owner.picture", p.Errors)
	}
	r = s.do(t, "POST", "/operator/tenants", operatorKey, map[string]any{"name": "x", "application_name": "   "})
	wantStatus(t, "POST /operator/tenants with a blank application_name", r, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors["application_name"]) == 0 {
		t.Errorf("errors = %v, want application_name", p.Errors)
	}

	r = s.do(t, "GET", "/operator/tenants?size=2", operatorKey, nil)
	wantStatus(t, "GET /operator/tenants", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.Tenant]
	r.json(t, &page)
	if page.Pagination.TotalItems != 3 || len(page.Data) != 2 || page.Pagination.After == "" {
		t.Fatalf("GET /operator/tenants?size=2 = %s", r.body)
	}
	r = s.do(t, "GET", "/operator/tenants?size=2&start="+page.Pagination.After, operatorKey, nil)
	wantStatus(t, "GET /operator/tenants by cursor", r, http.StatusOK)
	var rest tokenvault.Page[tokenvault.Tenant]
	r.json(t, &rest)
	if len(rest.Data) != 1 || rest.Pagination.After != "" {
		t.Fatalf("the page after the cursor = %s", r.body)
	}
	wantStatus(t, "GET /operator/tenants?bogus", s.do(t, "GET", "/operator/tenants?bogus=1", operatorKey, nil), http.StatusBadRequest)

	r = s.do(t, "GET", "/operator/tenants/"+boot.Tenant.ID, operatorKey, nil)
	wantStatus(t, "GET /operator/tenants/{id}", r, http.StatusOK)
	var got tokenvault.Tenant
	r.json(t, &got)
	if got.ID != boot.Tenant.ID || got.Name != "Globex" {
		t.Errorf("GET /operator/tenants/{id} = %s", r.body)
	}

	wantStatus(t, "DELETE /operator/tenants/{id}", s.do(t, "DELETE", "/operator/tenants/"+boot.Tenant.ID, operatorKey, nil), http.StatusNoContent)
	wantStatus(t, "the deleted tenant's key", s.do(t, "GET", "/tenants/self", string(boot.Application.Key), nil), http.StatusUnauthorized)
	wantStatus(t, "GET the deleted tenant", s.do(t, "GET", "/operator/tenants/"+boot.Tenant.ID, operatorKey, nil), http.StatusNotFound)
	wantStatus(t, "DELETE it again", s.do(t, "DELETE", "/operator/tenants/"+boot.Tenant.ID, operatorKey, nil), http.StatusNotFound)
	wantStatus(t, "the other tenant's key", s.do(t, "GET", "/tenants/self", s.mgmt, nil), http.StatusOK)
}

// TestOperatorKeyIsolation: the operator routes refuse every key but the
// operator key; without an operator key configured they do not exist.
func TestOperatorKeyIsolation(t *testing.T) {
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey})
	id := s.boot.Tenant.ID
	routes := httpapi.Routes(httpapi.New(nil, httpapi.Options{OperatorKey: operatorKey}))
	if !slices.ContainsFunc(routes, func(r string) bool { return strings.Contains(r, "/operator/") }) {
		t.Fatal("no operator route with an operator key")
	}
	for _, pattern := range routes {
		method, path, body, header := requestFor(pattern, map[string]string{"operator": id}, "")
		if !strings.HasPrefix(path, "/operator/") {
			continue // the operator key on tenant routes: TestTenantIsolationEveryRoute
		}
		for _, key := range []string{"", s.mgmt, operatorKey + "x", strings.ToUpper(operatorKey)} {
			r := s.do(t, method, path, key, body, header...)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with key %.8q... = %d %s, want 401", method, path, key, r.status, r.body)
				continue
			}
			if p := r.problem(t); !strings.Contains(p.Detail, "operator key") || strings.Contains(string(r.body), operatorKey) {
				t.Errorf("%s %s: problem %+v", method, path, p)
			}
		}
	}

	// Without an operator key, the routes answer as unknown ones do, with
	// any method: a 405 and its Allow header would tell they exist.
	off := newServer(t, httpapi.Options{})
	for _, pattern := range routes {
		if method, path := concretePath(pattern, id); strings.HasPrefix(path, "/operator/") {
			for _, m := range []string{method, "PUT", "PATCH"} {
				r := off.do(t, m, path, operatorKey, nil)
				if r.status != http.StatusNotFound || r.problem(t).Detail != "no such route" || r.header.Get("Allow") != "" {
					t.Errorf("%s %s without an operator key configured = %d %v %s, want 404", m, path, r.status, r.header, r.body)
				}
			}
		}
	}
}

// TestOperatorKeyThrottled: failed operator authentications count in the
// failed-authentication throttle of the client's address; the operator
// key itself is never refused by it.
func TestOperatorKeyThrottled(t *testing.T) {
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 2 })
	for range 2 {
		wantStatus(t, "a wrong operator key", s.do(t, "GET", "/operator/tenants", "wrong-wrong-wrong-wrong", nil), http.StatusUnauthorized)
	}
	wantStatus(t, "the operator key after failures", s.do(t, "GET", "/operator/tenants", operatorKey, nil), http.StatusOK)
	r := s.do(t, "GET", "/operator/tenants", "wrong-wrong-wrong-wrong", nil)
	wantStatus(t, "a third wrong operator key", r, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}

func TestOperatorKeyTooShort(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted a 5-character operator key")
		}
	}()
	httpapi.New(nil, httpapi.Options{OperatorKey: "short"})
}

// TestOperatorBackupOverHTTP streams a bbolt snapshot that opens with the
// master key and holds a token; a memory store answers 422.
func TestOperatorBackupOverHTTP(t *testing.T) {
	dir := t.TempDir()
	var master []byte
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) {
		st, err := bolt.Open(filepath.Join(dir, "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o.Store, master = st, o.Keys.MasterKey
	})
	_, key := s.app(t, map[string]any{"name": "rw", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	tok, err := s.v.CreateToken(context.Background(), tokenvault.Credential(key), tokenvault.TokenRequest{Type: "token", Data: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do(t, "GET", "/operator/backup", operatorKey, nil)
	wantStatus(t, "GET /operator/backup", r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" || !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("headers %v", r.header)
	}
	if bytes.Contains(r.body, []byte("kept")) {
		t.Error("the snapshot holds the token's value in plaintext")
	}
	path := filepath.Join(dir, "restored.db")
	if err := os.WriteFile(path, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: master}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatalf("Open(backup): %v", err)
	}
	defer v.Close()
	if got, err := v.GetToken(context.Background(), tokenvault.Credential(key), tok.ID); err != nil || got.Data != "kept" {
		t.Errorf("GetToken from the backup = %+v, %v", got, err)
	}

	mem := newServer(t, httpapi.Options{OperatorKey: operatorKey})
	r = mem.do(t, "GET", "/operator/backup", operatorKey, nil)
	wantStatus(t, "GET /operator/backup on a memory store", r, http.StatusUnprocessableEntity)
	if p := r.problem(t); !strings.Contains(p.Detail, "pg_dump") {
		t.Errorf("problem %+v", p)
	}
}

// brokenSnapshots is a memory store whose snapshot fails after its first
// bytes.
type brokenSnapshots struct{ *memory.Store }

func (brokenSnapshots) WriteSnapshot(_ context.Context, w io.Writer) (int64, error) {
	n, _ := w.Write(make([]byte, 100))
	return int64(n), errors.New("disk on fire")
}

// TestOperatorBackupBrokenOff: a snapshot that fails after its first byte
// aborts the connection, so the client sees a broken transfer (before or
// after the headers, as buffering goes), never a complete 200.
func TestOperatorBackupBrokenOff(t *testing.T) {
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey, Logger: slog.New(slog.DiscardHandler)}, func(o *tokenvault.Options) {
		o.Store = brokenSnapshots{memory.New()}
		o.Logger = slog.New(slog.DiscardHandler)
	})
	req, _ := http.NewRequest("GET", s.srv.URL+"/vault/operator/backup", nil)
	req.Header.Set("SVC-API-KEY", operatorKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return // broken off before the headers were flushed
	}
	defer res.Body.Close()
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Errorf("a backup that failed midway read as complete (status %d)", res.StatusCode)
	}
}

// TestOperatorBackupOutlivesWriteTimeout: the backup lifts the server's
// write deadline, so a store larger than WriteTimeout allows still copies
// whole. (A deadline of one nanosecond has always passed by the first
// write.)
func TestOperatorBackupOutlivesWriteTimeout(t *testing.T) {
	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	master := make([]byte, 32)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: st, Keys: tokenvault.KeyOptions{MasterKey: master}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewUnstartedServer(httpapi.New(v, httpapi.Options{OperatorKey: operatorKey}))
	srv.Config.WriteTimeout = time.Nanosecond
	srv.Start()
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/operator/backup", nil)
	req.Header.Set("SVC-API-KEY", operatorKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /operator/backup with a 1ns WriteTimeout: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("GET /operator/backup with a 1ns WriteTimeout = %d, %d bytes, %v", res.StatusCode, len(b), err)
	}
}
