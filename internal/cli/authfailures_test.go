package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestAuthFailuresLockNobodyOutThroughTheCommand: the server as the
// command configures it with -auth-failures-per-minute 20 and
// -trust-forwarded-for: 30 wrong keys from one address get 20 401 and 10
// 429, the management key is then served from that address; 60 forwarded
// values that are not IP addresses count as the connection's one address.
func TestAuthFailuresLockNobodyOutThroughTheCommand(t *testing.T) {
	cfg, err := parseConfig([]string{"-data", t.TempDir(), "-auth-failures-per-minute", "20", "-trust-forwarded-for"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	v, _, closeVault, err := openVault(context.Background(), cfg, func(string) string { return "" }, log, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeVault()
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(v, log, log, newMetrics(), cfg.trustForwardedFor, "", "")
	get := func(remote, forwarded, key string) int {
		r := httptest.NewRequest("GET", "/tenants/self", nil)
		r.RemoteAddr = remote + ":40000"
		if forwarded != "" {
			r.Header.Set("X-Forwarded-For", forwarded)
		}
		r.Header.Set(httpapi.APIKeyHeader, key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	counts := map[int]int{}
	for i := range 30 {
		counts[get("192.0.2.10", "203.0.113.7", fmt.Sprint("key_wrong_", i))]++
	}
	if counts[http.StatusUnauthorized] != 20 || counts[http.StatusTooManyRequests] != 10 {
		t.Errorf("30 wrong keys from one address: statuses %v, want 20 401 and 10 429", counts)
	}
	if got := get("192.0.2.10", "203.0.113.7", string(boot.Application.Key)); got != http.StatusOK {
		t.Errorf("the management key from that address = %d, want 200", got)
	}
	counts = map[int]int{}
	for i := range 60 {
		counts[get("192.0.2.11", fmt.Sprint("not-an-ip-", i), "key_wrong")]++
	}
	if counts[http.StatusUnauthorized] != 20 || counts[http.StatusTooManyRequests] != 40 {
		t.Errorf("60 forwarded values that are not addresses: statuses %v, want 20 401 and 40 429", counts)
	}
}
