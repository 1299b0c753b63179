package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/console"
)

// TestMountedRedirectAndBadPaths: mounted as the server mounts it
// (Mount, the API at "/"), /console redirects to /console/ with the
// console's security headers, and a path that names no file (%ff, a
// path no file system takes) is a plain 404 that says nothing of how it
// is served.
func TestMountedRedirectAndBadPaths(t *testing.T) {
	mux := http.NewServeMux()
	console.Mount(mux)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s %s reached the API", r.Method, r.URL)
		http.NotFound(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/console", http.StatusMovedPermanently},
		{"/console?x=1", http.StatusMovedPermanently},
		{"/console/%ff", http.StatusNotFound},
		{"/console/%ff/app.js", http.StatusNotFound},
		{"/console/a%00b", http.StatusNotFound},
		{"/console/pages/%c0%af", http.StatusNotFound},
	} {
		res, err := noRedirect.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("GET %s = %s, want %d", c.path, res.Status, c.status)
		}
		if c.status == http.StatusMovedPermanently && res.Header.Get("Location") != console.Prefix {
			t.Errorf("GET %s: Location %q, want %q", c.path, res.Header.Get("Location"), console.Prefix)
		}
		for name, want := range map[string]string{
			"Content-Security-Policy": console.ContentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
		} {
			if got := res.Header.Get(name); got != want {
				t.Errorf("GET %s: %s = %q, want %q", c.path, name, got, want)
			}
		}
		for _, internal := range []string{"invalid", "Internal", "open ", "static"} {
			if strings.Contains(string(body), internal) {
				t.Errorf("GET %s: body %q tells %q", c.path, body, internal)
			}
		}
	}
}
