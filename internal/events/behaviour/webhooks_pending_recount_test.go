package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestPendingCountedOutsideTheCommit: a Vault opened on a store that
// already holds a webhook's pending deliveries learns their number
// without counting it in a tokenize's commit. A test event (which asks
// for a delivery) counts first and is refused at the cap; a tokenize's
// event is dropped once the dispatcher has counted, and the first
// tokenize of a Vault that has not counted yet overshoots the cap by its
// own event only (the caps bound storage: internal/events' pending.go).
func TestPendingCountedOutsideTheCommit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	open := func() *tokenvault.Vault {
		t.Helper()
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{
			Path: path, Now: time.Now, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
			Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1},
			Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true},
			Webhooks: tokenvault.WebhookOptions{Schedule: []time.Duration{time.Hour}, MaxPendingPerWebhook: 3, MaxPendingPerTenant: 100},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	closeVault := func(v *tokenvault.Vault) {
		t.Helper()
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	failing := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	v := open()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"}})
	if err != nil {
		t.Fatal(err)
	}
	mgmt := boot.Application.Key
	app, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "tokenizer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	hook, err := v.CreateWebhook(ctx, mgmt, tokenvault.WebhookRequest{Name: "hook", URL: failing.URL, Events: []string{tokenvault.EventTokenCreated}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := v.TestWebhook(ctx, mgmt, hook.ID); err != nil {
			t.Fatalf("test event %d: %v", i, err)
		}
	}
	closeVault(v)
	pending := func(v *tokenvault.Vault) int {
		t.Helper()
		page, err := v.ListWebhookDeliveries(ctx, mgmt, hook.ID, tokenvault.PageRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range page.Data {
			if d.Status == tokenvault.DeliveryPending {
				n++
			}
		}
		return n
	}
	tokenize := func(v *tokenvault.Vault) {
		t.Helper()
		if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret-data-42"}); err != nil {
			t.Fatal(err)
		}
	}

	// A fresh instance: a test event counts first, and is refused.
	v = open()
	_, err = v.TestWebhook(ctx, mgmt, hook.ID)
	vaulttest.WantPendingCap(t, "a test event at the cap, on a fresh instance", err)
	tokenize(v)
	if n := pending(v); n != 3 {
		t.Fatalf("a tokenize at the counted cap: %d pending deliveries, want 3 (its event dropped)", n)
	}
	closeVault(v)

	// Another fresh instance: its first tokenize's event is queued (it
	// has no count, and takes none in its commit); the dispatcher then
	// counts, and the next event is dropped.
	v = open()
	tokenize(v)
	if n := pending(v); n != 4 {
		t.Fatalf("the first tokenize of an instance without a count: %d pending deliveries, want 4", n)
	}
	vaulttest.WaitUntil(t, "the dispatcher's count", func() bool { return v.Stats().PendingEventDeliveries == 4 })
	tokenize(v)
	if n := pending(v); n != 4 {
		t.Fatalf("a tokenize past the cap once counted: %d pending deliveries, want 4", n)
	}
}
