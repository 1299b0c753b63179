package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// direct is a handler served without a network, so that what Observe
// saw is known when ServeHTTP returns.
type direct struct {
	h     http.Handler
	route string
}

func newDirect(t *testing.T) *direct {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	d := &direct{}
	d.h = httpapi.New(v, httpapi.Options{Observe: func(_ context.Context, o httpapi.Observation) { d.route = o.Route },
		OperatorKey: "direct-operator-key-0123456789"}) // so that /operator/ routes exist
	return d
}

// serve answers method target with no key and, for a body route, an
// empty JSON object; it returns the status, the body and the route.
func (d *direct) serve(method, target string) (int, string, string) {
	var body io.Reader
	if method == "POST" || method == "PUT" || method == "PATCH" {
		body = strings.NewReader("{}")
	}
	req := httptest.NewRequest(method, target, body)
	if method == "PATCH" {
		req.Header.Set("Content-Type", httpapi.MergePatchType)
	}
	d.route = ""
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), d.route
}

// concrete turns a pattern into a method and a path that it matches.
func concrete(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{rest...}", "a/b")
	path = strings.ReplaceAll(path, "{id}", "0190a0b0-0000-7000-8000-000000000001")
	return method, path
}

// TestTrailingSlash: every route (but the proxy's, whose path is the
// caller's, and the root) answers a path with one trailing slash exactly
// as the path without it, from the same route.
func TestTrailingSlash(t *testing.T) {
	d := newDirect(t)
	patterns := httpapi.Routes(d.h)
	if len(patterns) < 60 {
		t.Fatalf("only %d routes", len(patterns))
	}
	for _, pattern := range patterns {
		method, path := concrete(pattern)
		if path == "/{$}" || path == "/proxy" || strings.HasPrefix(path, "/proxy/") {
			continue
		}
		status, body, route := d.serve(method, path)
		sStatus, sBody, sRoute := d.serve(method, path+"/")
		if status == http.StatusNotFound && strings.Contains(body, "no such route") || status == http.StatusMethodNotAllowed {
			t.Errorf("%s %s = %d %s: the route does not answer", method, path, status, body)
		}
		if sStatus != status || sBody != body || sRoute != route {
			t.Errorf("%s %s/ = %d from %q, want %d from %q as without the slash (%s)", method, path, sStatus, sRoute, status, route, sBody)
		}
		if sStatus, _, _ := d.serve(method, path+"//"); sStatus != http.StatusNotFound && sStatus != http.StatusMethodNotAllowed {
			t.Errorf("%s %s// = %d, want no route: only one slash is dropped", method, path, sStatus)
		}
	}
	// The root is GET / only; /{$} is not a prefix.
	if status, _, _ := d.serve("GET", "/nowhere/"); status != http.StatusNotFound {
		t.Errorf("GET /nowhere/ = %d, want 404", status)
	}
}

// TestTrailingSlashServes: real calls with a trailing slash, as the legacy
// JavaScript SDK makes them, work.
func TestTrailingSlashServes(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/applications/", s.mgmt, map[string]any{"name": "pub", "type": "public", "permissions": []string{"token:create"}})
	wantStatus(t, "POST /applications/", r, http.StatusCreated)
	var pub tokenvault.Application
	r.json(t, &pub)
	r = s.do(t, "POST", "/tokenize/", string(pub.Key), map[string]any{"type": "token", "data": "x"})
	wantStatus(t, "POST /tokenize/", r, http.StatusCreated)
	r = s.do(t, "POST", "/sessions/", string(pub.Key), nil)
	wantStatus(t, "POST /sessions/", r, http.StatusCreated)
	r = s.do(t, "GET", "/applications/"+pub.ID+"/", s.mgmt, nil)
	wantStatus(t, "GET /applications/{id}/", r, http.StatusOK)
	r = s.do(t, "GET", "/logs/?entity_type=application&size=5", s.mgmt, nil)
	wantStatus(t, "GET /logs/?...", r, http.StatusOK)
	var logs tokenvault.Page[tokenvault.Log]
	r.json(t, &logs)
	if len(logs.Data) == 0 {
		t.Error("GET /logs/?entity_type=application found nothing")
	}
	r = s.do(t, "GET", "/permissions/?application_type=private", s.mgmt, nil)
	wantStatus(t, "GET /permissions/?...", r, http.StatusOK)
	r = s.do(t, "POST", "/proxies/", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com/"})
	wantStatus(t, "POST /proxies/", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	r = s.do(t, "GET", "/proxies/?id="+p.ID, s.mgmt, nil)
	wantStatus(t, "GET /proxies/?id=...", r, http.StatusOK)
	var proxies tokenvault.Page[tokenvault.Proxy]
	r.json(t, &proxies)
	if len(proxies.Data) != 1 || proxies.Data[0].ID != p.ID {
		t.Errorf("GET /proxies/?id= = %s", r.body)
	}
	// An encoded slash is part of the id, which then names nothing, as in
	// process: it used to act on the application without it.
	for _, method := range []string{"GET", "DELETE"} {
		r = s.do(t, method, "/applications/"+pub.ID+"%2F", s.mgmt, nil)
		wantStatus(t, method+" /applications/{id}%2F", r, http.StatusNotFound)
	}
	r = s.do(t, "GET", "/applications/"+pub.ID, s.mgmt, nil)
	wantStatus(t, "GET /applications/{id} afterwards", r, http.StatusOK)
}

// TestNegativePageOverHTTP: a negative page and size are named both, with
// the Vault's words, as in process.
func TestNegativePageOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/applications?page=-1&size=-1", s.mgmt, nil)
	wantStatus(t, "GET /applications?page=-1&size=-1", r, http.StatusBadRequest)
	_, err := s.v.ListApplications(context.Background(), tokenvault.Credential(s.mgmt), tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Page: -1, Size: -1}})
	var want *tokenvault.Error
	if !errors.As(err, &want) {
		t.Fatalf("ListApplications(-1, -1) = %v", err)
	}
	if p := r.problem(t); !reflect.DeepEqual(p.Errors, want.Fields) {
		t.Errorf("errors = %v, want the Vault's %v", p.Errors, want.Fields)
	}
	for _, q := range []string{"page=0", "size=x", "page=1.5"} {
		r = s.do(t, "GET", "/applications?"+q, s.mgmt, nil)
		wantStatus(t, "GET /applications?"+q, r, http.StatusBadRequest)
	}
}

// TestProxyPathKeepsItsSlash: under /proxy the path is the caller's, a
// trailing slash and encoded slashes included.
func TestProxyPathKeepsItsSlash(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	seen := make(chan string, 8)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.EscapedPath() + "?" + r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	}))
	defer dest.Close()
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "require_auth": false, "destination_url": dest.URL + "/api"})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	for path, want := range map[string]string{
		"/proxy":                    "/api?",
		"/proxy/":                   "/api/?",
		"/proxy/x/":                 "/api/x/?",
		"/proxy/x":                  "/api/x?",
		"/proxy/x/?start=abc&bogus": "/api/x/?start=abc&bogus", // the query is the destination's
		"/proxy/files/a%2Fb":        "/api/files/a%2Fb?",
		"/proxy/files/a%2fb/c%20d":  "/api/files/a%2Fb/c%20d?",
		"/%70roxy/files/a%2Fb":      "/api/files/a%2Fb?",
	} {
		r = s.do(t, "GET", path, "", nil, "SVC-PROXY-KEY", p.Key)
		wantStatus(t, "GET "+path, r, http.StatusNoContent)
		if got := <-seen; got != want {
			t.Errorf("GET %s reached %s, want %s", path, got, want)
		}
	}
	// A ".." behind encoded slashes is refused, not forwarded.
	r = s.do(t, "GET", "/proxy/a%2F..%2Fadmin", "", nil, "SVC-PROXY-KEY", p.Key)
	wantStatus(t, "GET /proxy/a%2F..%2Fadmin", r, http.StatusBadRequest)
	if !strings.Contains(string(r.body), "proxy_error") {
		t.Errorf("GET /proxy/a%%2F..%%2Fadmin = %s, want a proxy_error", r.body)
	}
}

// TestUnknownQueryParameters: every route but proxy invocation refuses a
// query parameter it does not take, naming it, before anything else.
func TestUnknownQueryParameters(t *testing.T) {
	d := newDirect(t)
	for _, pattern := range httpapi.Routes(d.h) {
		method, path := concrete(pattern)
		path = strings.ReplaceAll(path, "{$}", "")
		status, body, _ := d.serve(method, path+"?bogus=1&page=1")
		if strings.HasPrefix(path, "/proxy") {
			if status == http.StatusBadRequest && strings.Contains(body, "bogus") {
				t.Errorf("%s %s?bogus=1 = %d %s: proxy invocation must pass its query on", method, path, status, body)
			}
			continue
		}
		var p httpapi.Problem
		if err := json.Unmarshal([]byte(body), &p); err != nil || status != http.StatusBadRequest || len(p.Errors["bogus"]) == 0 {
			t.Errorf("%s %s?bogus=1 = %d %s, want 400 naming bogus", method, path, status, body)
		}
		lists := slices.Contains(httpapi.QueryParams(d.h)[pattern], "page")
		if lists != (p.Errors["page"] == nil) {
			t.Errorf("%s %s?page=1: errors %v; a list takes page, nothing else does", method, path, p.Errors)
		}
	}

	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/applications/key?start=abc", s.mgmt, nil)
	wantStatus(t, "GET /applications/key?start=abc", r, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors["start"]) == 0 || !strings.Contains(p.Errors["start"][0], "unknown query parameter") {
		t.Errorf("errors = %v, want start named", p.Errors)
	}
	r = s.do(t, "GET", "/applications?start=&size=2", s.mgmt, nil)
	wantStatus(t, "GET /applications?start=", r, http.StatusOK)
	r = s.do(t, "GET", "/logs?entity-type=token", s.mgmt, nil)
	wantStatus(t, "GET /logs?entity-type (a typo)", r, http.StatusBadRequest)
	if p := r.problem(t); !strings.Contains(strings.Join(p.Errors["entity-type"], ""), "entity_type") {
		t.Errorf("errors = %v, want the accepted names listed", p.Errors)
	}
	_, reader := s.app(t, map[string]any{"name": "r", "type": "private", "permissions": []string{"token:read"}})
	r = s.do(t, "GET", "/tokens?metadata.ref=A1&container=/&type=token&fingerprint=x&id=0190a0b0-0000-7000-8000-000000000001&start=", reader, nil)
	wantStatus(t, "GET /tokens with every filter", r, http.StatusOK)
	r = s.do(t, "GET", "/tokens?metadata.=A1", reader, nil)
	wantStatus(t, "GET /tokens?metadata.=", r, http.StatusBadRequest)
	r = s.do(t, "GET", "/tenants/self/members?user_id=x&user=y", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/members?user=", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["user"] == nil || p.Errors["user_id"] != nil {
		t.Errorf("errors = %v, want user only", p.Errors)
	}

	// A pair that does not parse is not dropped (and its filter with it):
	// the whole query is refused.
	for _, q := range []string{"type=card%zz", "type=card;", "bogus=%zz", "start=%"} {
		r = s.do(t, "GET", "/tokens?"+q, reader, nil)
		wantStatus(t, "GET /tokens?"+q, r, http.StatusBadRequest)
		if p := r.problem(t); !strings.Contains(p.Detail, "malformed") {
			t.Errorf("GET /tokens?%s: detail %q, want the query called malformed", q, p.Detail)
		}
	}
	r = s.do(t, "GET", "/logs?entity_type=application%zz", s.mgmt, nil)
	wantStatus(t, "GET /logs?entity_type=application%zz", r, http.StatusBadRequest)

	// A parameter that takes one value, given twice, is refused, not
	// read as the first; id lists repeat.
	r = s.do(t, "GET", "/tokens?size=5&size=6", reader, nil)
	wantStatus(t, "GET /tokens?size=5&size=6", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["size"] == nil {
		t.Errorf("errors = %v, want size named", p.Errors)
	}
	r = s.do(t, "GET", "/applications?id=0190a0b0-0000-7000-8000-000000000001&id=0190a0b0-0000-7000-8000-000000000002", s.mgmt, nil)
	wantStatus(t, "GET /applications with two ids", r, http.StatusOK)
}

// TestMetadataNullOverHTTP: a null metadata value is a 400, on POST
// /tokens and POST /tokenize, not stored as "".
func TestMetadataNullOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private", "permissions": []string{"token:create", "token:read"}})
	for _, path := range []string{"/tokens", "/tokenize"} {
		r := s.do(t, "POST", path, key, `{"type": "token", "data": "x", "metadata": {"k": null}}`)
		wantStatus(t, "POST "+path+" with a null metadata value", r, http.StatusBadRequest)
		if p := r.problem(t); p.Errors["metadata"] == nil && p.Errors["metadata.k"] == nil {
			t.Errorf("POST %s: errors %v, want metadata named", path, p.Errors)
		}
	}
}

// TestLossyTextOverHTTP: invalid UTF-8, lone surrogate escapes and keys
// given twice in a body are a 400 naming the path, and nothing is stored.
func TestLossyTextOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, backend := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	for _, tc := range []struct{ name, method, path, body, field string }{
		{"surrogate in data", "POST", "/tokenize", `{"type": "token", "data": "\ud800"}`, "data"},
		{"surrogate in a nested value", "POST", "/tokenize", `[1, 2, {"data": {"name": "x\udc00"}}]`, "[2].data.name"},
		{"invalid byte in a value", "POST", "/tokenize", `{"type": "token", "data": "` + "\xff" + `"}`, "data"},
		{"invalid byte in a key", "POST", "/tokenize", `{"type": "token", "data": {"` + "a\xffb" + `": 1}}`, "data"},
		{"token create", "POST", "/tokens", `{"type": "token", "data": "ok", "metadata": {"k": "\ud800"}}`, "metadata.k"},
		{"application name", "POST", "/applications", `{"name": "\ud800", "type": "private", "permissions": ["token:read"]}`, "name"},
		// A key given twice would lose one of its values.
		{"duplicate plain value", "POST", "/tokenize", `{"v": "x", "v": "y"}`, "v"},
		{"duplicate key in data", "POST", "/tokenize", `{"type": "token", "data": {"a": 1, "b": {}, "\u0061": 2}}`, "data.a"},
		{"duplicate metadata", "POST", "/tokens", `{"type": "token", "data": "ok", "metadata": {"k": "1", "k": "2"}}`, "metadata.k"},
		{"duplicate field", "POST", "/tokens", `{"type": "token", "data": "ok", "type": "card"}`, "type"},
	} {
		key := backend
		if tc.path == "/applications" {
			key = s.mgmt
		}
		r := s.do(t, tc.method, tc.path, key, tc.body)
		wantStatus(t, tc.name, r, http.StatusBadRequest)
		if p := r.problem(t); len(p.Errors[tc.field]) == 0 {
			t.Errorf("%s: errors = %v, want %q", tc.name, p.Errors, tc.field)
		}
	}
	r := s.do(t, "GET", "/tokens", backend, nil)
	wantStatus(t, "GET /tokens", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.Token]
	r.json(t, &page)
	if page.Pagination.TotalItems != 0 {
		t.Errorf("%d tokens stored from refused bodies", page.Pagination.TotalItems)
	}
	r = s.do(t, "GET", "/applications", s.mgmt, nil)
	var apps tokenvault.Page[tokenvault.Application]
	r.json(t, &apps)
	for _, a := range apps.Data {
		if strings.ContainsRune(a.Name, '\uFFFD') {
			t.Errorf("application %q stored", a.Name)
		}
	}
	// A surrogate pair is text, kept as sent.
	r = s.do(t, "POST", "/tokenize", backend, `{"type": "token", "data": "\ud83d\ude00"}`)
	wantStatus(t, "a surrogate pair", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	r = s.do(t, "GET", "/tokens/"+tok.ID, backend, nil)
	r.json(t, &tok)
	if tok.Data != "😀" {
		t.Errorf("data = %q, want 😀", tok.Data)
	}
}

// TestErrorsThatGuide: a 401 names the header the key belongs in; a bad
// date-time names its field; GET / points to the document.
func TestErrorsThatGuide(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "GET", "/applications", "", nil, "Authorization", "Bearer "+s.mgmt)
	wantStatus(t, "GET /applications with Authorization: Bearer", r, http.StatusUnauthorized)
	if p := r.problem(t); !strings.Contains(p.Detail, "SVC-API-KEY header") || !strings.Contains(p.Detail, "Authorization header is not read") {
		t.Errorf("detail = %q, want the header named and Authorization refused", p.Detail)
	}
	r = s.do(t, "GET", "/applications", "nope", nil)
	wantStatus(t, "GET /applications with a bad key", r, http.StatusUnauthorized)
	if p := r.problem(t); !strings.Contains(p.Detail, "SVC-API-KEY") || strings.Contains(p.Detail, "Authorization") {
		t.Errorf("detail = %q", p.Detail)
	}

	_, private := s.app(t, map[string]any{"name": "p", "type": "private", "permissions": []string{"token:create", "token:read"}})
	r = s.do(t, "POST", "/sessions", "", nil)
	wantStatus(t, "POST /sessions without a key", r, http.StatusUnauthorized)
	for _, tc := range []struct{ name, method, path, key, body, field string }{
		{"application expires_at", "POST", "/applications", s.mgmt, `{"name": "a", "type": "private", "permissions": ["token:read"], "expires_at": "tomorrow"}`, "expires_at"},
		{"application expires_at, a number", "POST", "/applications", s.mgmt, `{"name": "a", "type": "private", "permissions": ["token:read"], "expires_at": 5}`, "expires_at"},
		{"session expires_at", "POST", "/sessions/authorize", private, `{"nonce": "n", "permissions": ["token:read"], "expires_at": "2030-13-01"}`, "expires_at"},
		{"token expires_at", "POST", "/tokens", private, `{"type": "token", "data": "x", "expires_at": "soon"}`, "expires_at"},
		{"tokenize expires_at", "POST", "/tokenize", private, `{"a": {"type": "token", "data": "x", "expires_at": "soon"}}`, "a.expires_at"},
		{"log start_date", "GET", "/logs?start_date=yesterday", s.mgmt, "", "start_date"},
		{"log end_date", "GET", "/logs?end_date=2030-01-01", s.mgmt, "", "end_date"},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := s.do(t, tc.method, tc.path, tc.key, body)
		wantStatus(t, tc.name, r, http.StatusBadRequest)
		if p := r.problem(t); !strings.Contains(strings.Join(p.Errors[tc.field], ""), "date-time") {
			t.Errorf("%s: errors = %v, want a date-time error on %s", tc.name, p.Errors, tc.field)
		}
	}
	r = s.do(t, "POST", "/tokens", private, map[string]any{"type": "token", "data": "x"})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	_, updater := s.app(t, map[string]any{"name": "u", "type": "private", "permissions": []string{"token:update"}})
	r = s.do(t, "PATCH", "/tokens/"+tok.ID, updater, `{"expires_at": "later"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH /tokens/{id} expires_at", r, http.StatusBadRequest)
	if p := r.problem(t); !strings.Contains(strings.Join(p.Errors["expires_at"], ""), "date-time") {
		t.Errorf("PATCH: errors = %v, want a date-time error on expires_at", p.Errors)
	}

	r = s.do(t, "GET", "/", "", nil)
	wantStatus(t, "GET /", r, http.StatusOK)
	var root map[string]string
	r.json(t, &root)
	if root["openapi"] != "/vault/openapi.json" {
		t.Errorf("GET / = %s, want the document under the mount point", r.body)
	}
	r = s.do(t, "GET", root["openapi"][len("/vault"):], "", nil)
	wantStatus(t, "GET the document GET / names", r, http.StatusOK)
	r = s.do(t, "POST", "/", "", nil)
	wantStatus(t, "POST /", r, http.StatusMethodNotAllowed)
}

// TestReactorNumberOutOfRangeOverHTTP: 1e400 for a number parameter is a
// 400 naming it.
func TestReactorNumberOutOfRangeOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, user := s.app(t, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:use"}}}})
	r := s.do(t, "POST", "/reactor-formulas", s.mgmt, map[string]any{
		"name": "n", "code": "module.exports = async (req) => ({raw: {n: req.args.n}})",
		"request_parameters": []map[string]any{{"name": "n", "type": "number"}},
	})
	wantStatus(t, "POST /reactor-formulas", r, http.StatusCreated)
	var f tokenvault.Formula
	r.json(t, &f)
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "n", "formula": map[string]any{"id": f.ID}, "configuration": map[string]any{}})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)
	for _, body := range []string{`{"args": {"n": 1e400}}`, `{"args": {"n": -1e400}}`, `{"args": {"n": "1e400"}}`} {
		r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, body)
		wantStatus(t, body, r, http.StatusBadRequest)
		if p := r.problem(t); len(p.Errors["args.n"]) == 0 {
			t.Errorf("%s: errors = %v, want args.n", body, p.Errors)
		}
	}
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, `{"args": {"n": "1e300"}}`)
	wantStatus(t, "1e300", r, http.StatusOK)
	if !strings.Contains(string(r.body), `"n":1e+300`) {
		t.Errorf("1e300: %s", r.body)
	}
}

// TestProxyApplicationIDOverHTTP: proxies answer application_id beside
// application, and take either.
func TestProxyApplicationIDOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	a1, _ := s.app(t, map[string]any{"name": "a1", "type": "private", "permissions": []string{"token:use"}})
	a2, _ := s.app(t, map[string]any{"name": "a2", "type": "public", "permissions": []string{"token:create"}})
	fields := func(what string, r response) map[string]any {
		t.Helper()
		var m map[string]any
		r.json(t, &m)
		return m
	}
	check := func(what string, m map[string]any, id string) {
		t.Helper()
		app, _ := m["application"].(map[string]any)
		if id == "" {
			if _, ok := m["application_id"]; ok || app != nil {
				t.Errorf("%s: %v, want no application", what, m)
			}
			return
		}
		if m["application_id"] != id || app == nil || app["id"] != id {
			t.Errorf("%s: application %v, application_id %v, want %s", what, m["application"], m["application_id"], id)
		}
	}
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com", "application_id": a1})
	wantStatus(t, "POST /proxies with application_id", r, http.StatusCreated)
	created := fields("create", r)
	check("POST /proxies", created, a1)
	id := created["id"].(string)
	r = s.do(t, "GET", "/proxies/"+id, s.mgmt, nil)
	wantStatus(t, "GET /proxies/{id}", r, http.StatusOK)
	check("GET /proxies/{id}", fields("get", r), a1)
	r = s.do(t, "GET", "/proxies", s.mgmt, nil)
	var page struct{ Data []map[string]any }
	r.json(t, &page)
	check("GET /proxies", page.Data[0], a1)

	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com",
		"application": map[string]any{"id": a1}, "application_id": a2})
	wantStatus(t, "POST /proxies with both, differing", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["application_id"] == nil {
		t.Errorf("errors = %v", p.Errors)
	}
	r = s.do(t, "PUT", "/proxies/"+id, s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com", "application_id": a2})
	wantStatus(t, "PUT /proxies/{id} with application_id", r, http.StatusOK)
	check("PUT", fields("put", r), a2)
	r = s.do(t, "PATCH", "/proxies/"+id, s.mgmt, `{"application_id": "`+a1+`"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH application_id", r, http.StatusNoContent)
	r = s.do(t, "GET", "/proxies/"+id, s.mgmt, nil)
	check("after PATCH application_id", fields("get", r), a1)
	r = s.do(t, "PATCH", "/proxies/"+id, s.mgmt, `{"application": {"id": "`+a1+`"}, "application_id": "`+a2+`"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH with both, differing", r, http.StatusBadRequest)
	r = s.do(t, "PATCH", "/proxies/"+id, s.mgmt, `{"application_id": null}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH application_id null", r, http.StatusNoContent)
	r = s.do(t, "GET", "/proxies/"+id, s.mgmt, nil)
	check("after PATCH application_id null", fields("get", r), "")
}

// TestProxy401NamesTheKeys: a proxy's 401 says where the proxy key and
// the API key go; Authorization is the destination's, so no hint about it.
func TestProxy401NamesTheKeys(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com"})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	for _, tc := range []struct{ what, key string }{{"no proxy key", ""}, {"no API key", p.Key}} {
		r = s.do(t, "POST", "/proxy/pay", "", map[string]any{"a": 1}, "SVC-PROXY-KEY", tc.key, "Authorization", "Bearer dest-secret")
		wantStatus(t, tc.what, r, http.StatusUnauthorized)
		var body struct {
			ProxyError httpapi.Problem `json:"proxy_error"`
		}
		r.json(t, &body)
		d := body.ProxyError.Detail
		if !strings.Contains(d, "SVC-PROXY-KEY") || !strings.Contains(d, "SVC-API-KEY") || strings.Contains(d, "dest-secret") {
			t.Errorf("%s: detail = %q", tc.what, d)
		}
	}
}

// TestProxyBodyLossyText: a JSON body through a proxy holding a lone
// surrogate or a key twice is a 400 proxy_error naming its path; the
// destination is not called.
func TestProxyBodyLossyText(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	called := make(chan struct{}, 1)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer dest.Close()
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "require_auth": false, "destination_url": dest.URL})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	for _, body := range []string{`{"card": {"holder": "\ud800"}}`, `{"card": {"holder": "A", "holder": "B"}}`} {
		r = s.do(t, "POST", "/proxy/pay", "", body, "SVC-PROXY-KEY", p.Key)
		wantStatus(t, "POST /proxy/pay "+body, r, http.StatusBadRequest)
		var answer struct {
			ProxyError httpapi.Problem `json:"proxy_error"`
		}
		r.json(t, &answer)
		if len(answer.ProxyError.Errors["card.holder"]) == 0 {
			t.Errorf("%s: proxy_error = %+v, want card.holder named", body, answer.ProxyError)
		}
	}
	select {
	case <-called:
		t.Error("the destination was called")
	default:
	}
}

// TestBigNumbersOverHTTP: a number where any value goes keeps every digit
// over HTTP, as in process (it was read as a float64: 2^60+1 came back as
// 1152921504606847000).
func TestBigNumbersOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, backend := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	const big = `1152921504606846977`
	r := s.do(t, "POST", "/tokens", backend, `{"type": "token", "data": {"n": `+big+`, "x": 12345678901234567890123}}`)
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok struct{ ID string }
	r.json(t, &tok)
	r = s.do(t, "GET", "/tokens/"+tok.ID, backend, nil)
	wantStatus(t, "GET /tokens/{id}", r, http.StatusOK)
	if !strings.Contains(string(r.body), `"n":`+big) || !strings.Contains(string(r.body), `"x":12345678901234567890123`) {
		t.Errorf("GET /tokens/{id} = %s, want n %s and x 12345678901234567890123", r.body, big)
	}
	r = s.do(t, "POST", "/proxies", s.mgmt, `{"name": "p", "destination_url": "https://example.com", "configuration": {"n": `+big+`}}`)
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	if !strings.Contains(string(r.body), `"n":`+big) {
		t.Errorf("POST /proxies = %s, want configuration.n %s", r.body, big)
	}
}

// TestEngineErrorsDoNotQuoteDataOverHTTP: a reactor failing on a detokenized
// value answers a problem without the value (the engine's message quotes
// it and is withheld).
func TestEngineErrorsDoNotQuoteDataOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, user := s.app(t, map[string]any{"name": "u", "type": "private", "permissions": []string{"token:create", "token:use"}})
	r := s.do(t, "POST", "/tokens", user, map[string]any{"type": "token", "data": "4111111111111111"})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "r", "code": `module.exports = async (req) => null[req.args.n]`})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"args": map[string]any{"n": "{{ " + tok.ID + " }}"}})
	wantStatus(t, "react", r, http.StatusInternalServerError)
	if p := r.problem(t); strings.Contains(string(r.body), "41111111") || p.Type != tokenvault.CodeFailedProblemType {
		t.Errorf("react = %s, want a code problem without the card", r.body)
	}
}
