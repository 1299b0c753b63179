package events_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/webhooks"
)

// eventReceiver is a webhook receiver on loopback that keeps every request it
// acknowledged.
type eventReceiver struct {
	mu   sync.Mutex
	got  []receivedHook
	srv  *httptest.Server
	seen chan struct{}
}

type receivedHook struct {
	header http.Header
	body   []byte
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{seen: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, receivedHook{req.Header.Clone(), body})
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *eventReceiver) requests() []receivedHook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestEveryEventDeliveredSigned subscribes a real eventReceiver through the
// public API (CreateWebhook) to the whole catalogue, drives the API
// through every change, and sends a test event: every type arrives, each
// event exactly as it was committed (the tap), signed so that the
// exported webhooks.VerifyAt accepts it under the secret CreateWebhook
// answered, with the event id as webhook-id.
func TestEveryEventDeliveredSigned(t *testing.T) {
	rcv := newEventReceiver(t)
	var secret, hookID string
	r := fullRunTo(t, func(e *vaulttest.Env) (string, string) {
		h, err := e.V.CreateWebhook(ctx, e.Mgmt, tokenvault.WebhookRequest{Name: "everything", URL: rcv.srv.URL + "/hook",
			Events: catalogueNames()})
		mustDo(t, "CreateWebhook", err)
		secret, hookID = h.Secret, h.ID
		return h.ID, h.Secret
	})
	if _, err := r.e.V.TestWebhook(ctx, r.e.Mgmt, hookID); err != nil {
		t.Fatalf("TestWebhook: %v", err)
	}
	committed := map[string][]byte{} // event id: its JSON
	for _, ev := range r.tap.Events() {
		committed[ev.Info.ID] = ev.JSON
	}
	want := append(catalogueNames(), tokenvault.EventWebhookTest)

	deadline := time.Now().Add(time.Minute)
	for {
		types := map[string]bool{}
		for _, req := range rcv.requests() {
			var body struct {
				Event struct {
					Type string `json:"type"`
				} `json:"event"`
			}
			json.Unmarshal(req.body, &body)
			types[body.Event.Type] = true
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(typ string) bool { return types[typ] })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute the receiver has no event of %v", missing)
		}
		select {
		case <-rcv.seen:
		case <-time.After(time.Second):
		}
	}

	for _, req := range rcv.requests() {
		ts, err := strconv.ParseInt(req.header.Get("webhook-timestamp"), 10, 64)
		if err != nil {
			t.Fatalf("webhook-timestamp %q", req.header.Get("webhook-timestamp"))
		}
		// The run moves the Vault's clock on (expiries), so each delivery
		// is checked at its own time; the tolerance has the package's own
		// tests.
		if err := webhooks.VerifyAt(secret, req.header, req.body, time.Unix(ts, 0)); err != nil {
			t.Errorf("a delivery does not verify: %v (%s)", err, req.body)
		}
		var body struct {
			Event       json.RawMessage `json:"event"`
			DeliveredAt time.Time       `json:"delivered_at"`
		}
		if err := json.Unmarshal(req.body, &body); err != nil || body.DeliveredAt.IsZero() {
			t.Fatalf("body %s: %v", req.body, err)
		}
		var info tokenvault.WebhookEventInfo
		if err := json.Unmarshal(body.Event, &info); err != nil {
			t.Fatal(err)
		}
		if id := req.header.Get("webhook-id"); id != info.ID {
			t.Errorf("webhook-id %q, event id %q", id, info.ID)
		}
		if info.Type == tokenvault.EventWebhookTest {
			continue
		}
		if c, ok := committed[info.ID]; !ok || string(c) != string(body.Event) {
			t.Errorf("delivered event %s\nwas committed as %s", body.Event, c)
		}
	}
	for _, req := range rcv.requests() {
		for _, s := range r.secrets {
			if s != "" && strings.Contains(string(req.body), s) {
				t.Errorf("a delivered %s body holds a planted secret", req.header.Get("webhook-id"))
			}
		}
	}
}
