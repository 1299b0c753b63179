package cli

import (
	"context"
	"log/slog"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestWebhooksMaxPerTenantFlag: -webhooks-max-per-tenant (or its
// environment variable) is the Vault's per-tenant webhook limit.
func TestWebhooksMaxPerTenantFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"flag", []string{"-webhooks-max-per-tenant", "2"}, nil},
		{"env", nil, map[string]string{"TOKENVAULT_WEBHOOKS_MAX_PER_TENANT": "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			cfg, err := parseConfig(append([]string{"-data", t.TempDir()}, tc.args...), getenv)
			if err != nil {
				t.Fatal(err)
			}
			v, _, closeVault, err := openVault(context.Background(), cfg, getenv, slog.New(slog.DiscardHandler), nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeVault()
			ctx := context.Background()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			req := tokenvault.WebhookRequest{Name: "w", URL: "https://hooks.example.com/in", Events: []string{"*"}}
			for i := range 2 {
				if _, err := v.CreateWebhook(ctx, boot.Application.Key, req); err != nil {
					t.Fatalf("webhook %d: %v", i+1, err)
				}
			}
			if _, err := v.CreateWebhook(ctx, boot.Application.Key, req); tokenvault.ErrorKind(err) != tokenvault.Conflict {
				t.Errorf("the 3rd webhook = %v, want Conflict", err)
			}
		})
	}
}

// TestWebhooksMaxPendingFlags: -webhooks-max-pending-per-webhook and
// -per-tenant (or their environment variables) are the Vault's caps of
// pending deliveries: past the webhook's, a test event is RateLimited.
func TestWebhooksMaxPendingFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"flag", []string{"-webhooks-max-pending-per-webhook", "1", "-webhooks-max-pending-per-tenant", "5"}, nil},
		{"env", nil, map[string]string{"TOKENVAULT_WEBHOOKS_MAX_PENDING_PER_WEBHOOK": "1", "TOKENVAULT_WEBHOOKS_MAX_PENDING_PER_TENANT": "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			cfg, err := parseConfig(append([]string{"-data", t.TempDir()}, tc.args...), getenv)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.webhooksMaxPendingPerWebhook != 1 || cfg.webhooksMaxPendingPerTenant != 5 {
				t.Fatalf("parsed %d, %d", cfg.webhooksMaxPendingPerWebhook, cfg.webhooksMaxPendingPerTenant)
			}
			v, _, closeVault, err := openVault(context.Background(), cfg, getenv, slog.New(slog.DiscardHandler), nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeVault()
			ctx := context.Background()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			// A receiver nobody serves: the first delivery stays pending
			// (its attempt fails and waits for a retry).
			w, err := v.CreateWebhook(ctx, boot.Application.Key, tokenvault.WebhookRequest{Name: "w",
				URL: "https://hooks.example.invalid/in", Events: []string{"*"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.TestWebhook(ctx, boot.Application.Key, w.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := v.TestWebhook(ctx, boot.Application.Key, w.ID); tokenvault.ErrorKind(err) != tokenvault.RateLimited {
				t.Errorf("a 2nd test event past a cap of 1 = %v, want RateLimited", err)
			}
		})
	}
}
