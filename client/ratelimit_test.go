package client_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestClientRateLimitedAndIdempotent: a 429 becomes a RateLimited error
// with the server's Retry-After, and WithIdempotencyKey makes a repeated
// create answer the first token.
func TestClientRateLimitedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Now: clock, Keys: tokenvault.KeyOptions{MasterKey: key}, Limits: tokenvault.LimitOptions{RatePerKey: 0.5}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	defer srv.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read"}})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(srv.URL, nil)

	ictx := client.WithIdempotencyKey(ctx, "order-1")
	first, err := c.CreateToken(ictx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if !errors.Is(err, tokenvault.ErrRateLimited) {
		t.Fatalf("a second call at 0.5 a second = %v, want RateLimited", err)
	}
	var e *tokenvault.Error
	if !errors.As(err, &e) || e.RetryAfter != 2*time.Second || e.Status != http.StatusTooManyRequests {
		t.Errorf("RateLimited error = %+v, want RetryAfter 2s and status 429", e)
	}

	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	again, err := c.CreateToken(ictx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Errorf("repeated create with the same idempotency key = token %s, want the first, %s", again.ID, first.ID)
	}
}
