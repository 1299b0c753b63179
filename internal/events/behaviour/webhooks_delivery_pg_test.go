package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/postgres"
	"github.com/tokenvault/tokenvault/webhooks"
)

// TestWebhookDeliveryTwoInstancesOnPostgres: two Vaults on one
// PostgreSQL schema, both dispatching, deliver every event of tokens
// created on either, and never attempt one delivery at once (a receiver
// that sees a webhook-id arrive while the same id is in flight fails
// the test). Every first attempt fails, so retries are claimed again.
func TestWebhookDeliveryTwoInstancesOnPostgres(t *testing.T) {
	schema := vaulttest.FreshPGSchema(t)
	key := vaulttest.NewMasterKey()
	var vaults [2]*tokenvault.Vault
	for i := range vaults {
		ctx := context.Background()
		s, err := postgres.Open(ctx, vaulttest.PGDSN, &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		v, err := tokenvault.Open(ctx, tokenvault.Options{
			Store: s, Now: time.Now, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
			Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1},
			Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true},
			Webhooks: tokenvault.WebhookOptions{Schedule: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
				PollInterval: 20 * time.Millisecond, Timeout: 5 * time.Second},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		vaults[i] = v
	}

	var (
		mu       sync.Mutex
		inFlight = map[string]bool{}
		attempts = map[string]int{}
		acked    = map[string]bool{}
		overlap  []string
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(webhooks.HeaderID)
		mu.Lock()
		if inFlight[id] {
			overlap = append(overlap, id)
		}
		inFlight[id] = true
		attempts[id]++
		first := attempts[id] == 1
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		delete(inFlight, id)
		if !first {
			acked[id] = true
		}
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)

	ctx := context.Background()
	boot, err := vaults[0].CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vaulttest.PutDeliveryWebhook(vaults[0], boot.Tenant.ID, vaulttest.DeliveryHook{Name: "h", URL: rcv.URL,
		Secret: hookSecret, Events: []string{tokenvault.EventTokenCreated}}); err != nil {
		t.Fatal(err)
	}
	app, err := vaults[0].CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "creator", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	for i := range n {
		if _, err := vaults[i%2].CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		done := len(acked)
		mu.Unlock()
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events acknowledged", done, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(overlap) > 0 {
		t.Errorf("deliveries attempted by both instances at once: %v", overlap)
	}
}
