package events_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestWebhookSlowTenantDelaysNobodyElse: tenant A's receiver never
// answers (until the test ends) and A queues many events; tenant B's
// event is still delivered at once, because A holds only its own slots.
func TestWebhookSlowTenantDelaysNobodyElse(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Timeout = time.Minute })
	hang := make(chan struct{})
	slow := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { <-hang })
	t.Cleanup(func() { close(hang) })
	subscribe(t, e, slow.URL)
	keyA := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	for range 20 {
		createToken(t, e, keyA)
	}
	vaulttest.WaitUntil(t, "A's receiver to hang", func() bool { return len(slow.Got()) >= 4 })

	b := e.Tenant(t, "B")
	fast := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	idB, err := vaulttest.PutDeliveryWebhook(e.V, b.Tenant.ID, vaulttest.DeliveryHook{Name: "b", URL: fast.URL, Secret: hookSecret,
		Events: []string{tokenvault.EventTokenCreated}})
	if err != nil {
		t.Fatal(err)
	}
	appB, err := e.V.CreateApplication(context.Background(), b.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	createToken(t, e, appB.Key)
	for len(fast.Got()) == 0 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("tenant B's event waited behind tenant A's hanging receiver")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(slow.Got()); n > 4 {
		t.Errorf("A's receiver has %d requests in flight, over ConcurrencyPerWebhook", n)
	}
	_ = idB
}

// loopbackName finds a host name other than "localhost" that resolves
// only to loopback addresses, or "" when this machine has none.
func loopbackName() string {
	host, _ := os.Hostname()
	for _, name := range []string{"ip6-localhost", "ip6-loopback", "localhost.localdomain", host} {
		if name == "" {
			continue
		}
		addrs, err := net.LookupIP(name)
		if err != nil || len(addrs) == 0 {
			continue
		}
		all := true
		for _, a := range addrs {
			all = all && a.IsLoopback()
		}
		if all {
			return name
		}
	}
	return ""
}

// TestWebhookSSRFRefusedAtDelivery: with private destinations not
// allowed, a webhook whose URL names a loopback address, or a name that
// resolves to one, is refused at delivery: the attempt fails (and is
// retried), and the receiver never sees a connection.
func TestWebhookSSRFRefusedAtDelivery(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	srv.Config.ConnState = func(net.Conn, http.ConnState) { conns.Add(1) }
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)

	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) {
		o.Now = time.Now
		o.Outbound.AllowPrivateDestinations = false
		o.Webhooks.Schedule = []time.Duration{20 * time.Millisecond, time.Hour}
		o.Webhooks.PollInterval = 20 * time.Millisecond
	})
	urls := []string{"https://127.0.0.1:" + port + "/hook", "https://[::ffff:127.0.0.1]:" + port + "/hook", "http://example.com/hook"}
	if name := loopbackName(); name != "" {
		urls = append(urls, "https://"+name+":"+port+"/hook")
	} else {
		t.Log("no name resolves to loopback here but localhost: the dialer's check is not exercised")
	}
	var ids []string
	for _, u := range urls {
		ids = append(ids, subscribe(t, e, u))
	}
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	for i, id := range ids {
		vaulttest.WaitUntil(t, "two attempts of "+urls[i], func() bool {
			d := deliveries(t, e, id)
			return len(d) == 1 && d[0].Attempts == 2
		})
		d := deliveries(t, e, id)[0]
		if d.Status != tokenvault.DeliveryPending || d.ResponseStatus != 0 || d.Error == "" || strings.Contains(d.Error, port) {
			t.Errorf("%s: delivery %+v", urls[i], d)
		}
		t.Logf("%s: %s", urls[i], d.Error)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the receiver saw %d connection state changes", n)
	}
}

// TestWebhookTestAndRedeliver: TestWebhook queues a webhook.test event
// to that webhook only, though it does not subscribe to it; a finished
// delivery redelivered is sent again with the same webhook-id.
func TestWebhookTestAndRedeliver(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	id := subscribe(t, e, rcv.URL)
	other := subscribe(t, e, rcv.URL)
	ctx := context.Background()
	d, err := e.V.TestWebhook(ctx, e.Mgmt, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.EventType != tokenvault.EventWebhookTest || d.Status != tokenvault.DeliveryPending || d.WebhookID != id {
		t.Errorf("test delivery %+v", d)
	}
	vaulttest.WaitUntil(t, "the test event", func() bool { return len(rcv.Got()) == 1 })
	if len(deliveries(t, e, other)) != 0 {
		t.Error("the test event went to another webhook too")
	}
	vaulttest.WaitUntil(t, "the delivery to succeed", func() bool { return deliveries(t, e, id)[0].Status == tokenvault.DeliverySucceeded })
	again, err := e.V.RedeliverWebhookDelivery(ctx, e.Mgmt, id, d.ID)
	if err != nil || again.Status != tokenvault.DeliveryPending || again.Attempts != 0 {
		t.Fatalf("redeliver: %+v, %v", again, err)
	}
	vaulttest.WaitUntil(t, "the redelivery", func() bool { return len(rcv.Got()) == 2 })
	hits := rcv.Got()
	if hits[0].Header.Get("webhook-id") != hits[1].Header.Get("webhook-id") || !strings.Contains(string(hits[1].Body), `"type":"webhook.test"`) {
		t.Errorf("redelivery differs: %v / %s", hits[1].Header, hits[1].Body)
	}

	// Errors: unknown ids, another tenant's webhook, permissions.
	_, err = e.V.RedeliverWebhookDelivery(ctx, e.Mgmt, id, "0190f5a2-9000-7000-8000-000000000001")
	vaulttest.WantKind(t, "unknown delivery", err, tokenvault.NotFound)
	_, err = e.V.TestWebhook(ctx, e.Mgmt, "nope")
	vaulttest.WantKind(t, "unknown webhook", err, tokenvault.NotFound)
	b := e.Tenant(t, "B")
	_, err = e.V.TestWebhook(ctx, b.Application.Key, id)
	vaulttest.WantKind(t, "another tenant's webhook", err, tokenvault.NotFound)
	_, err = e.V.ListWebhookDeliveries(ctx, b.Application.Key, id, tokenvault.PageRequest{})
	vaulttest.WantKind(t, "another tenant's deliveries", err, tokenvault.NotFound)
	reader := e.App(t, tokenvault.Management, tokenvault.PermWebhookRead)
	_, err = e.V.TestWebhook(ctx, reader.Key, id)
	vaulttest.WantKind(t, "test without webhook:update", err, tokenvault.PermissionDenied)
	if _, err := e.V.ListWebhookDeliveries(ctx, reader.Key, id, tokenvault.PageRequest{}); err != nil {
		t.Errorf("list with webhook:read: %v", err)
	}
}

// TestWebhookDeliveriesPaging: newest first, a page at a time by cursor.
func TestWebhookDeliveriesPaging(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	id := subscribe(t, e, rcv.URL)
	key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	for range 5 {
		createToken(t, e, key)
	}
	ctx := context.Background()
	var seen []string
	req := tokenvault.PageRequest{Size: 2}
	for {
		page, err := e.V.ListWebhookDeliveries(ctx, e.Mgmt, id, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Data {
			seen = append(seen, d.ID)
		}
		if page.Pagination.After == "" {
			break
		}
		req.Start = page.Pagination.After
	}
	if len(seen) != 5 {
		t.Fatalf("%d deliveries listed", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Errorf("not newest first: %v", seen)
		}
	}
	_, err := e.V.ListWebhookDeliveries(ctx, e.Mgmt, id, tokenvault.PageRequest{Page: 2})
	vaulttest.WantKind(t, "page 2", err, tokenvault.Invalid)
	_, err = e.V.ListWebhookDeliveries(ctx, e.Mgmt, id, tokenvault.PageRequest{Start: "!!"})
	vaulttest.WantKind(t, "bad cursor", err, tokenvault.Invalid)
}

// TestWebhookDeletedIsPruned: a deleted webhook's queue entries and
// delivery records are removed by the dispatcher; a deleted tenant's
// entries are dropped.
func TestWebhookDeletedIsPruned(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Schedule = []time.Duration{time.Hour} })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	id := subscribe(t, e, rcv.URL)
	key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	for range 3 {
		createToken(t, e, key)
	}
	vaulttest.WaitUntil(t, "three attempts", func() bool { return len(rcv.Got()) == 3 })
	if q, r, _ := vaulttest.WebhookStoreCounts(e.V, e.Boot.Tenant.ID); q != 3 || r != 3 {
		t.Fatalf("%d queued, %d records", q, r)
	}
	if err := vaulttest.DeleteWebhook(e.V, e.Boot.Tenant.ID, id); err != nil {
		t.Fatal(err)
	}
	// Nothing is due for an hour: the dispatcher meets the webhook's
	// entries in its scan all the same.
	vaulttest.WaitUntil(t, "the deliveries to be pruned", func() bool {
		q, r, err := vaulttest.WebhookStoreCounts(e.V, e.Boot.Tenant.ID)
		return err == nil && q == 0 && r == 0
	})
}

// TestWebhookDeletedTenantQueueDropped: a deleted tenant's queued
// deliveries are dropped by the dispatcher (errTenantGone), never sent.
func TestWebhookDeletedTenantQueueDropped(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Schedule = []time.Duration{time.Hour} })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	b := e.Tenant(t, "B")
	if _, err := vaulttest.PutDeliveryWebhook(e.V, b.Tenant.ID, vaulttest.DeliveryHook{Name: "b", URL: rcv.URL, Secret: hookSecret,
		Events: []string{tokenvault.EventTokenCreated}}); err != nil {
		t.Fatal(err)
	}
	appB, err := e.V.CreateApplication(context.Background(), b.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "b", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	createToken(t, e, appB.Key)
	vaulttest.WaitUntil(t, "the first attempt", func() bool { return len(rcv.Got()) == 1 })
	if err := e.V.DeleteTenant(context.Background(), b.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	vaulttest.WaitUntil(t, "the queue to be empty", func() bool {
		q, _, err := vaulttest.WebhookStoreCounts(e.V, e.Boot.Tenant.ID)
		return err == nil && q == 0
	})
}

// TestWebhookCloseEndsAttempts: Close returns promptly while attempts
// hang on a receiver that never answers (their timeout is a minute): it
// cancels them and waits for the dispatcher and every attempt goroutine,
// so none outlives the Vault.
func TestWebhookCloseEndsAttempts(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Timeout = time.Minute })
	hang := make(chan struct{})
	slow := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { <-hang })
	t.Cleanup(func() { close(hang) })
	subscribe(t, e, slow.URL)
	key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	for range 3 {
		createToken(t, e, key)
	}
	vaulttest.WaitUntil(t, "the attempts to hang", func() bool { return len(slow.Got()) == 3 })
	closed := make(chan error, 1)
	go func() { closed <- e.V.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close waited for hanging attempts")
	}
	// The abandoned attempts' deliveries stay queued, for the next Open
	// (after their claims expire).
	q, r, err := vaulttest.WebhookStoreCounts(e.V, e.Boot.Tenant.ID)
	if err != nil || q != 3 || r != 3 {
		t.Errorf("after Close: %d queued, %d records, %v", q, r, err)
	}
}
