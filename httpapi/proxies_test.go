package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

func TestProxiesOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	type seen struct {
		method, path, query, auth, apiKey, body string
	}
	got := make(chan seen, 8)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("SVC-API-KEY"), string(b)}
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "maintenance")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	defer dest.Close()
	_, user := s.app(t, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:use"}}}})
	r := s.do(t, "POST", "/tokenize", user, `{"name": "Ada"}`)
	var toks struct{ Name string }
	r.json(t, &toks)

	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "not a url"})
	wantStatus(t, "proxy with a bad destination", r, http.StatusBadRequest)
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "http://example.com/"})
	wantStatus(t, "proxy with an http destination off the machine", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["destination_url"] == nil {
		t.Errorf("errors = %v, want destination_url", p.Errors)
	}
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	r = s.do(t, "GET", "/proxies?name=p", s.mgmt, nil)
	wantStatus(t, "GET /proxies", r, http.StatusOK)
	r = s.do(t, "PATCH", "/proxies/"+p.ID, s.mgmt, `{"name": "q"}`)
	wantStatus(t, "PATCH /proxies/{id} as JSON", r, http.StatusUnsupportedMediaType)
	r = s.do(t, "PATCH", "/proxies/"+p.ID, s.mgmt, `{"name": "q"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH /proxies/{id}", r, http.StatusNoContent)
	r = s.do(t, "PUT", "/proxies/"+p.ID, s.mgmt, map[string]any{"name": "q", "destination_url": dest.URL})
	wantStatus(t, "PUT /proxies/{id}", r, http.StatusOK)

	r = s.do(t, "POST", "/proxy/v1/pay?x=1&svc-proxy-key="+p.Key, user, `{"who": "{{`+toks.Name+`}}"}`, "Authorization", "Basic abc")
	wantStatus(t, "POST /proxy/...", r, http.StatusOK)
	if string(r.body) != `{"ok": true}` {
		t.Errorf("proxied response = %s", r.body)
	}
	d := <-got
	if d != (seen{"POST", "/v1/pay", "x=1", "Basic abc", "", `{"who":"Ada"}`}) {
		t.Errorf("destination saw %+v", d)
	}
	r = s.do(t, "GET", "/proxy", user, nil, "SVC-PROXY-KEY", p.Key)
	wantStatus(t, "GET /proxy", r, http.StatusOK)
	if d := <-got; d.method != "GET" || d.path != "/" {
		t.Errorf("destination saw %+v", d)
	}
	r = s.do(t, "DELETE", "/proxy/down", user, nil, "SVC-PROXY-KEY", p.Key)
	if r.status != http.StatusServiceUnavailable || string(r.body) != "maintenance" {
		t.Errorf("destination error = %d %s, want it unchanged", r.status, r.body)
	}
	<-got

	for _, tc := range []struct {
		name   string
		key    string
		body   string
		header []string
		status int
	}{
		{"no API key", "", `{}`, []string{"SVC-PROXY-KEY", p.Key}, 401},
		{"no proxy key", user, `{}`, nil, 401},
		{"unknown token", user, `{"a": "{{missing}}"}`, []string{"SVC-PROXY-KEY", p.Key}, 400},
		{"management key", s.mgmt, `{}`, []string{"SVC-PROXY-KEY", p.Key}, 403},
	} {
		r = s.do(t, "POST", "/proxy", tc.key, tc.body, tc.header...)
		if r.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.status)
			continue
		}
		var pe struct {
			ProxyError httpapi.Problem `json:"proxy_error"`
		}
		if err := json.Unmarshal(r.body, &pe); err != nil || pe.ProxyError.Status != tc.status || pe.ProxyError.Title == "" {
			t.Errorf("%s: body %s, want a proxy_error with status %d", tc.name, r.body, tc.status)
		}
	}
	r = s.do(t, "POST", "/proxy", user, `{"a": "{{missing}}"}`, "SVC-PROXY-KEY", p.Key)
	if !strings.Contains(string(r.body), `"body.a"`) {
		t.Errorf("unknown token error = %s, want the field", r.body)
	}
	r = s.do(t, "DELETE", "/proxies/"+p.ID, s.mgmt, nil)
	wantStatus(t, "DELETE /proxies/{id}", r, http.StatusNoContent)
}

// TestProxyPathStaysUnderTheDestination: a suffix with encoded "..",
// "?" or control characters never leaves the destination's path nor
// rewrites its query, errors never quote the destination URL (it may
// hold a credential), and the caller's query keeps its order.
func TestProxyPathStaysUnderTheDestination(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	seen := make(chan string, 8)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.EscapedPath() + "?" + r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	}))
	defer dest.Close()
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "require_auth": false,
		"destination_url": dest.URL + "/api/v1/payments?api_key=sk_live_SECRET"})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)

	for _, path := range []string{"/proxy/..%2F..%2Fadmin", "/proxy/%2e%2e/%2e%2e/admin", "/proxy/a/%2E%2E/%2E%2E/b"} {
		r = s.do(t, "GET", path, "", nil, "SVC-PROXY-KEY", p.Key)
		wantStatus(t, "GET "+path, r, http.StatusBadRequest)
		if strings.Contains(string(r.body), "SECRET") {
			t.Errorf("GET %s: the error quotes the destination: %s", path, r.body)
		}
	}
	for path, want := range map[string]string{
		"/proxy/a%3Fb=c": "/api/v1/payments/a%3Fb=c?api_key=sk_live_SECRET",
		"/proxy/a%23x":   "/api/v1/payments/a%23x?api_key=sk_live_SECRET",
		"/proxy/a%0Ab":   "/api/v1/payments/a%0Ab?api_key=sk_live_SECRET",
		"/proxy/x?b=2&svc-proxy-key=" + p.Key + "&a=1": "/api/v1/payments/x?api_key=sk_live_SECRET&b=2&a=1",
	} {
		r = s.do(t, "GET", path, "", nil, "SVC-PROXY-KEY", p.Key)
		wantStatus(t, "GET "+path, r, http.StatusNoContent)
		if got := <-seen; got != want {
			t.Errorf("GET %s reached %s, want %s", path, got, want)
		}
	}
	select {
	case got := <-seen:
		t.Errorf("the destination was also called at %s", got)
	default:
	}
}

// TestDeletedApplicationOverHTTP: a proxy whose application was deleted
// stays editable over HTTP by a patch that keeps it.
func TestDeletedApplicationOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	appID, _ := s.app(t, map[string]any{"name": "u", "type": "private", "permissions": []string{"token:use"}})
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com/", "application": map[string]any{"id": appID}})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	wantStatus(t, "DELETE /applications/{id}", s.do(t, "DELETE", "/applications/"+appID, s.mgmt, nil), http.StatusNoContent)
	r = s.do(t, "PATCH", "/proxies/"+p.ID, s.mgmt, `{"name": "renamed"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH /proxies/{id} keeping a deleted application", r, http.StatusNoContent)
}
