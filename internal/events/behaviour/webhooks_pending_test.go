package events_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/prommetrics"
)

// pendingEnv is a vaulttest.DeliveryEnv whose failed attempts wait an hour (so a
// delivery to a failing receiver stays pending), capped at perHook
// pending deliveries per webhook and perTenant per tenant, with its
// metrics in reg.
func pendingEnv(t *testing.T, perHook, perTenant int, reg *prometheus.Registry) *vaulttest.Env {
	return vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) {
		o.Webhooks.Schedule = []time.Duration{time.Hour}
		o.Webhooks.MaxPendingPerWebhook = perHook
		o.Webhooks.MaxPendingPerTenant = perTenant
		o.Metrics = prommetrics.New(reg)
	})
}

// TestWebhookPendingCaps: test events past a webhook's cap of pending
// deliveries, and a test event or a redelivery past its tenant's, are
// refused (RateLimited); an ordinary write at a cap succeeds, its event
// dropped for the webhook at the cap (counted as "dropped"), still
// queued to the others; another tenant is not affected; Stats and the
// pending gauge count the pending deliveries.
func TestWebhookPendingCaps(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := pendingEnv(t, 3, 4, reg)
	ctx := context.Background()
	failing := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	ok := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	stuck := subscribe(t, e, failing.URL)
	fine := subscribe(t, e, ok.URL)

	for i := range 3 {
		if _, err := e.V.TestWebhook(ctx, e.Mgmt, stuck); err != nil {
			t.Fatalf("test event %d: %v", i, err)
		}
	}
	_, err := e.V.TestWebhook(ctx, e.Mgmt, stuck)
	vaulttest.WantPendingCap(t, "a 4th test event to a webhook capped at 3", err)
	if n := len(deliveries(t, e, stuck)); n != 3 {
		t.Fatalf("the refused test event queued a delivery: %d", n)
	}

	// A write at the webhook's cap succeeds; its event reaches the other
	// webhook only.
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the event at the other webhook", func() bool {
		d := deliveries(t, e, fine)
		return len(d) == 1 && d[0].Status == tokenvault.DeliverySucceeded
	})
	if n := len(deliveries(t, e, stuck)); n != 3 {
		t.Errorf("the capped webhook has %d deliveries, want 3 (the event dropped)", n)
	}
	if got := metricValue(t, reg, "tokenvault_event_delivery_attempts_total", "outcome", "dropped"); got != 1 {
		t.Errorf("dropped events counted %v, want 1", got)
	}

	// The tenant's cap (4): one more pending delivery to a third webhook
	// fills it; then a test event to the healthy webhook, and a
	// redelivery of its finished delivery, are refused.
	third := subscribe(t, e, failing.URL)
	if _, err := e.V.TestWebhook(ctx, e.Mgmt, third); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.TestWebhook(ctx, e.Mgmt, fine)
	vaulttest.WantPendingCap(t, "a test event past the tenant's cap", err)
	_, err = e.V.RedeliverWebhookDelivery(ctx, e.Mgmt, fine, deliveries(t, e, fine)[0].ID)
	vaulttest.WantPendingCap(t, "a redelivery past the tenant's cap", err)

	// Another tenant has caps of its own.
	other := e.Tenant(t, "Other")
	hook, err := vaulttest.PutDeliveryWebhook(e.V, other.Tenant.ID, vaulttest.DeliveryHook{Name: "hook", URL: failing.URL,
		Secret: hookSecret, Events: []string{tokenvault.EventTokenCreated}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.V.TestWebhook(ctx, other.Application.Key, hook); err != nil {
			t.Fatalf("other tenant's test event %d: %v", i, err)
		}
	}

	if got := e.V.Stats().PendingEventDeliveries; got != 7 {
		t.Errorf("Stats().PendingEventDeliveries = %d, want 7", got)
	}
	reg.MustRegister(prommetrics.NewStatsCollector(e.V))
	mfs, _ := reg.Gather()
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "tokenvault_webhook_deliveries_pending" {
			found = true
			if got := mf.GetMetric()[0].GetGauge().GetValue(); got != 7 {
				t.Errorf("tokenvault_webhook_deliveries_pending = %v, want 7", got)
			}
		}
	}
	if !found {
		t.Error("no tokenvault_webhook_deliveries_pending gauge")
	}
}

// TestWebhookPendingCapOverHTTP: POST /webhooks/{id}/test past the cap
// answers 429 problem+json with Retry-After, while a tokenize still
// answers 201.
func TestWebhookPendingCapOverHTTP(t *testing.T) {
	e := pendingEnv(t, 1, 10, prometheus.NewRegistry())
	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	t.Cleanup(srv.Close)
	failing := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	id := subscribe(t, e, failing.URL)
	post := func(path string, key tokenvault.Credential, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("SVC-API-KEY", string(key))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := post("/webhooks/"+id+"/test", e.Mgmt, ""); res.StatusCode != http.StatusAccepted {
		t.Fatalf("first test event: %d", res.StatusCode)
	}
	res := post("/webhooks/"+id+"/test", e.Mgmt, "")
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") ||
		res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "pending") {
		t.Fatalf("second test event: %d %q Retry-After %q %s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Retry-After"), b)
	}
	key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	if res := post("/tokens", key, `{"type":"token","data":"secret-data-42"}`); res.StatusCode != http.StatusCreated {
		t.Fatalf("tokenize at the cap: %d", res.StatusCode)
	}
}

// TestWebhookTestEventsCapped: of 400 test events sent to a webhook
// whose receiver fails, with the default caps, 10 are queued and the
// others refused (RateLimited in process, 429 over HTTP); an ordinary
// write's event is still queued to it.
func TestWebhookTestEventsCapped(t *testing.T) {
	e := pendingEnv(t, 0, 0, prometheus.NewRegistry())
	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	failing := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	id := subscribe(t, e, failing.URL)
	queued := 0
	for i := range 400 {
		var err error
		if i%2 == 0 {
			_, err = e.V.TestWebhook(ctx, e.Mgmt, id)
		} else {
			req, _ := http.NewRequest("POST", srv.URL+"/webhooks/"+id+"/test", nil)
			req.Header.Set("SVC-API-KEY", string(e.Mgmt))
			res, herr := http.DefaultClient.Do(req)
			if herr != nil {
				t.Fatal(herr)
			}
			res.Body.Close()
			switch res.StatusCode {
			case http.StatusAccepted:
			case http.StatusTooManyRequests:
				if res.Header.Get("Retry-After") == "" {
					t.Fatal("a 429 without Retry-After")
				}
				err = &tokenvault.Error{Kind: tokenvault.RateLimited, RetryAfter: time.Second, Message: "pending"}
			default:
				t.Fatalf("POST test: %d", res.StatusCode)
			}
		}
		if err == nil {
			queued++
			continue
		}
		vaulttest.WantPendingCap(t, "test event", err)
	}
	if queued != 10 || len(deliveries(t, e, id)) != 10 {
		t.Fatalf("%d test events queued, %d deliveries; want 10", queued, len(deliveries(t, e, id)))
	}
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	if n := len(deliveries(t, e, id)); n != 11 {
		t.Errorf("after a write: %d deliveries, want 11", n)
	}
}
