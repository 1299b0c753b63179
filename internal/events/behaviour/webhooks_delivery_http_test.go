package events_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/webhooks"
)

// TestWebhookDeliveriesOverHTTP: the test event, the deliveries list and
// a redelivery over HTTP and through the Go client, with their errors as
// problem+json.
func TestWebhookDeliveriesOverHTTP(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	id := subscribe(t, e, rcv.URL)

	d, err := c.TestWebhook(ctx, e.Mgmt, id)
	if err != nil || d.EventType != tokenvault.EventWebhookTest || d.WebhookID != id {
		t.Fatalf("TestWebhook: %+v, %v", d, err)
	}
	vaulttest.WaitUntil(t, "the test event", func() bool { return len(rcv.Got()) == 1 })
	h := rcv.Got()[0]
	if err := webhooks.Verify(hookSecret, h.Header, h.Body); err != nil {
		t.Error(err)
	}
	vaulttest.WaitUntil(t, "the delivery to succeed", func() bool {
		page, err := c.ListWebhookDeliveries(ctx, e.Mgmt, id, tokenvault.PageRequest{})
		return err == nil && len(page.Data) == 1 && page.Data[0].Status == tokenvault.DeliverySucceeded
	})
	again, err := c.RedeliverWebhookDelivery(ctx, e.Mgmt, id, d.ID)
	if err != nil || again.ID != d.ID || again.Status != tokenvault.DeliveryPending {
		t.Fatalf("redeliver: %+v, %v", again, err)
	}
	vaulttest.WaitUntil(t, "the redelivery", func() bool { return len(rcv.Got()) == 2 })

	// Raw HTTP: status codes and problem+json.
	do := func(method, path string) (int, string, string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("SVC-API-KEY", string(e.Mgmt))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := do("POST", "/webhooks/"+id+"/test"); code != http.StatusAccepted || !strings.Contains(body, `"event_type":"webhook.test"`) {
		t.Errorf("POST test = %d %s", code, body)
	}
	if code, _, body := do("GET", "/webhooks/"+id+"/deliveries?size=1"); code != http.StatusOK || !strings.Contains(body, `"after"`) {
		t.Errorf("GET deliveries = %d %s", code, body)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/webhooks/" + id + "/deliveries?page=2", 400},
		{"GET", "/webhooks/" + id + "/deliveries?color=red", 400},
		{"GET", "/webhooks/0190f5a2-9000-7000-8000-000000000001/deliveries", 404},
		{"POST", "/webhooks/" + id + "/deliveries/nope/redeliver", 404},
		{"POST", "/webhooks/nope/test", 404},
	} {
		code, ct, body := do(tc.method, tc.path)
		if code != tc.status || !strings.HasPrefix(ct, "application/problem+json") {
			t.Errorf("%s %s = %d %s %s, want %d problem+json", tc.method, tc.path, code, ct, body, tc.status)
		}
	}
	_, err = c.TestWebhook(ctx, e.Mgmt, "0190f5a2-9000-7000-8000-000000000001")
	vaulttest.WantKind(t, "client: unknown webhook", err, tokenvault.NotFound)
}
