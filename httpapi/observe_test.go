package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestObserve: every request reaches Options.Observe once, with its route
// pattern, status and the tenant of the key, and nothing the caller sent.
func TestObserve(t *testing.T) {
	var (
		mu  sync.Mutex
		got []httpapi.Observation
	)
	s := newServer(t, httpapi.Options{Observe: func(_ context.Context, o httpapi.Observation) {
		if o.Duration <= 0 {
			t.Errorf("%s %s: duration %v, want > 0", o.Method, o.Route, o.Duration)
		}
		mu.Lock()
		got = append(got, o)
		mu.Unlock()
	}})
	tenant := s.boot.Tenant.ID
	app := s.do(t, "POST", "/applications", s.mgmt, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	wantStatus(t, "create application", app, http.StatusCreated)
	secret := "078-05-1120"
	s.do(t, "POST", "/tokens", "", map[string]any{"type": "token", "data": secret})
	s.do(t, "POST", "/tokenize", s.mgmt, map[string]any{"ssn": secret})
	s.do(t, "GET", "/tokens/"+"0190d5a3-0000-7000-8000-000000000000", s.mgmt, nil)
	s.do(t, "GET", "/tenants/self", "key_wrong", nil)
	s.do(t, "GET", "/no/such/route?svc-proxy-key="+secret, s.mgmt, nil)
	s.do(t, "DELETE", "/tokenize", s.mgmt, nil)

	want := []httpapi.Observation{
		{Method: "POST", Route: "/applications", Status: 201, TenantID: tenant},
		{Method: "POST", Route: "/tokens", Status: 401},
		{Method: "POST", Route: "/tokenize", Status: 403, TenantID: tenant},
		{Method: "GET", Route: "/tokens/{id}", Status: 403, TenantID: tenant},
		{Method: "GET", Route: "/tenants/self", Status: 401},
		{Method: "GET", Route: "", Status: 404},
		{Method: "DELETE", Route: "", Status: 405},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(httpapi.Observation{}, "Duration")); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

// TestObserved: a handler of the host's, wrapped, is reported with its
// route and the status it wrote (200 when it wrote nothing).
func TestObserved(t *testing.T) {
	var got []httpapi.Observation
	observe := func(_ context.Context, o httpapi.Observation) { got = append(got, o) }
	unready := httpapi.Observed("/readyz", observe, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	silent := httpapi.Observed("/healthz", observe, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	unready.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/readyz", nil))
	silent.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("HEAD", "/healthz", nil))
	want := []httpapi.Observation{
		{Method: "GET", Route: "/readyz", Status: 503},
		{Method: "HEAD", Route: "/healthz", Status: 200},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(httpapi.Observation{}, "Duration")); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}
