package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestLimitFlagsReachTheVault: -code-workers reaches the sandbox (its
// resolved size in Stats), and -max-pending-token-intents-per-address
// caps the intents of one address through the server's handler: 5 created
// from one address leave 2 live, the oldest three 404. Bad values stop the
// server before it starts.
func TestLimitFlagsReachTheVault(t *testing.T) {
	cfg, err := parseConfig([]string{"-data", t.TempDir(), "-code-workers", "3", "-code-concurrency-per-tenant", "2",
		"-max-pending-token-intents-per-address", "2", "-max-pending-sessions-per-address", "7"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.maxPendingSessionsPerAddr != 7 || cfg.codeConcurrencyPerTenant != 2 {
		t.Fatalf("parsed %+v", cfg)
	}
	log := slog.New(slog.DiscardHandler)
	v, _, closeVault, err := openVault(context.Background(), cfg, func(string) string { return "" }, log, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeVault()
	if got := v.Stats().CodeWorkersMax; got != 3 {
		t.Errorf("CodeWorkersMax = %d, want 3 from -code-workers", got)
	}
	boot, err := v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := v.CreateApplication(context.Background(), boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "checkout", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(v, log, log, newMetrics(), cfg.trustForwardedFor, "", "")
	do := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.RemoteAddr = "198.51.100.7:40000"
		r.Header.Set("SVC-API-KEY", string(pub.Key))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	var ids []string
	for i := range 5 {
		w := do("POST", "/token-intents", fmt.Sprintf(`{"type": "token", "data": "value %d"}`, i))
		if w.Code != http.StatusCreated {
			t.Fatalf("intent %d: %d %s", i, w.Code, w.Body)
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(w.Body.String(), `{"id":"`), `"`)
		ids = append(ids, id)
	}
	for i, id := range ids {
		want := http.StatusNotFound
		if i >= 3 {
			want = http.StatusOK
		}
		if w := do("GET", "/token-intents/"+id, ""); w.Code != want {
			t.Errorf("intent %d: GET = %d, want %d", i, w.Code, want)
		}
	}
	for _, args := range [][]string{{"-code-workers", "-1"}, {"-code-workers", "2", "-code-concurrency-per-tenant", "3"}, {"-max-pending-sessions-per-address", "many"}} {
		if _, err := parseConfig(append([]string{"-data", t.TempDir()}, args...), func(string) string { return "" }); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
}
