package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/health", 200},
		{"POST", "/health", 405},
		{"GET", "/tokens", 404},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
		if tc.want == 200 && string(body) != "ok" {
			t.Errorf("%s %s: body %q, want ok", tc.method, tc.path, body)
		}
	}
}
