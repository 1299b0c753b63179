package reactors

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewProxyKey(t *testing.T) {
	t.Parallel()
	a, b := NewProxyKey(), NewProxyKey()
	if !strings.HasPrefix(a, ProxyKeyPrefix) || len(a) < len(ProxyKeyPrefix)+20 || a == b {
		t.Errorf("NewProxyKey() = %q, %q; want two different random keys starting with %q", a, b, ProxyKeyPrefix)
	}
}

func TestApplyProxyRequest(t *testing.T) {
	t.Parallel()
	no := false
	for _, tc := range []struct {
		name        string
		req         ProxyRequest
		requireAuth bool
		appID       string
	}{
		{"defaults", ProxyRequest{Name: "P", DestinationURL: "https://example.com"}, true, ""},
		{"no auth, an application", ProxyRequest{Name: "P", RequireAuth: &no, Application: &Ref{ID: "app1"}}, false, "app1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Proxy{ID: "p1", ApplicationID: "stale"}
			ApplyProxyRequest(&tc.req, p, map[string]any{"k": "v"})
			if p.Name != tc.req.Name || p.DestinationURL != tc.req.DestinationURL || p.RequireAuth != tc.requireAuth ||
				p.ApplicationID != tc.appID || p.Configuration["k"] != "v" {
				t.Errorf("ApplyProxyRequest(%+v) = %+v, want require_auth %v, application_id %q", tc.req, p, tc.requireAuth, tc.appID)
			}
		})
	}
}

func TestProxyRecordRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := &Proxy{ID: "p1", TenantID: "t1", Name: "P", Key: "pxy_k", DestinationURL: "https://example.com",
		RequestTransform: &ProxyTransform{Code: "module.exports = async r => r"}, Application: &Ref{ID: "app1"},
		ApplicationID: "app1", Configuration: map[string]any{"k": "v"}, RequireAuth: true, CreatedBy: "u1",
		CreatedAt: now, ModifiedBy: "u2", ModifiedAt: &now}
	rec := ProxyRecordOf(p, []byte("mac"))
	if string(rec.KeyHash) != "mac" {
		t.Errorf("ProxyRecordOf kept key hash %q, want mac", rec.KeyHash)
	}
	if diff := cmp.Diff(p, ProxyOf(rec)); diff != "" {
		t.Errorf("ProxyOf(ProxyRecordOf(p)) differs from p (-want +got):\n%s", diff)
	}
}
