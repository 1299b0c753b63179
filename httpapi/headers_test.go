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

// sendHeaders sends a request under /vault with the headers as given, each value
// its own header line (http.Header.Add), so that a name can repeat.
func (s *server) sendHeaders(t *testing.T, method, path string, header [][2]string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+"/vault"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range header {
		req.Header.Add(h[0], h[1])
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

// TestTwoKeysRefused sends two API keys, and two different proxy keys in
// every way a request can carry them, and wants 400 naming the header: a
// front proxy may have read the other one. The same proxy key in the
// header and the query is one key.
func TestTwoKeysRefused(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	defer dest.Close()
	r := s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": dest.URL, "require_auth": false})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	var p tokenvault.Proxy
	r.json(t, &p)
	_, other := s.app(t, map[string]any{"name": "o", "type": "private", "permissions": []string{"token:read"}})

	// One key is served.
	r = s.sendHeaders(t, "GET", "/applications", [][2]string{{"SVC-API-KEY", s.mgmt}})
	wantStatus(t, "GET /applications with one key", r, http.StatusOK)
	r = s.sendHeaders(t, "GET", "/proxy/x", [][2]string{{"SVC-PROXY-KEY", p.Key}})
	wantStatus(t, "GET /proxy with one proxy key", r, http.StatusOK)
	r = s.sendHeaders(t, "GET", "/proxy/x?svc-proxy-key="+p.Key, [][2]string{{"SVC-PROXY-KEY", p.Key}})
	wantStatus(t, "GET /proxy with the proxy key in the header and the query", r, http.StatusOK)

	for _, tc := range []struct {
		name, path string
		header     [][2]string
		field      string
	}{
		{"two API keys", "/applications", [][2]string{{"SVC-API-KEY", s.mgmt}, {"SVC-API-KEY", other}}, "SVC-API-KEY"},
		{"the same API key twice", "/applications", [][2]string{{"SVC-API-KEY", s.mgmt}, {"svc-api-key", s.mgmt}}, "SVC-API-KEY"},
		{"two API keys to a proxy", "/proxy/x", [][2]string{{"SVC-PROXY-KEY", p.Key}, {"SVC-API-KEY", s.mgmt}, {"SVC-API-KEY", other}}, "SVC-API-KEY"},
		{"two proxy key headers", "/proxy/x", [][2]string{{"SVC-PROXY-KEY", p.Key}, {"SVC-PROXY-KEY", "pk_other"}}, "SVC-PROXY-KEY"},
		{"a proxy key header and another parameter", "/proxy/x?svc-proxy-key=" + p.Key, [][2]string{{"SVC-PROXY-KEY", "pk_other"}}, "SVC-PROXY-KEY"},
		{"two proxy key parameters", "/proxy/x?svc-proxy-key=" + p.Key + "&svc%2Dproxy-key=x", nil, "SVC-PROXY-KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.sendHeaders(t, "GET", tc.path, tc.header)
			wantStatus(t, tc.name, r, http.StatusBadRequest)
			var fields map[string][]string
			if strings.HasPrefix(tc.path, "/proxy/") {
				var body map[string]httpapi.Problem
				if err := json.Unmarshal(r.body, &body); err != nil {
					t.Fatalf("%s: %s: %v", tc.name, r.body, err)
				}
				fields = body["proxy_error"].Errors
			} else {
				fields = r.problem(t).Errors
			}
			if len(fields[tc.field]) == 0 {
				t.Errorf("%s: errors = %v, want one on %s", tc.name, fields, tc.field)
			}
		})
	}
}
