package events_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/webhooks"
)

// hookSecret and oldSecret are webhook signing secrets ("whsec_" and 32
// bytes).
const (
	hookSecret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ="
	oldSecret  = "whsec_b2xkLW9sZC1vbGQtb2xkLW9sZC1vbGQtb2xkLW9sZC0="
)

// subscribe stores a webhook of e's bootstrap tenant for token.created at
// url.
func subscribe(t *testing.T, e *vaulttest.Env, url string, adjust ...func(*vaulttest.DeliveryHook)) string {
	t.Helper()
	h := vaulttest.DeliveryHook{Name: "hook", URL: url, Secret: hookSecret, Events: []string{tokenvault.EventTokenCreated},
		NotifyEmail: "ops@example.com"}
	for _, a := range adjust {
		a(&h)
	}
	id, err := vaulttest.PutDeliveryWebhook(e.V, e.Boot.Tenant.ID, h)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// deliveries lists webhook id's deliveries with e's management key.
func deliveries(t *testing.T, e *vaulttest.Env, id string) []tokenvault.WebhookDelivery {
	t.Helper()
	page, err := e.V.ListWebhookDeliveries(context.Background(), e.Mgmt, id, tokenvault.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Data
}

func createToken(t *testing.T, e *vaulttest.Env, key tokenvault.Credential) *tokenvault.Token {
	t.Helper()
	tok, err := e.V.CreateToken(context.Background(), key, tokenvault.TokenRequest{Type: "token", Data: "secret-data-42"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestWebhookDeliveryRetriesUntilAcknowledged: a HookReceiver failing five
// times then answering 204 gets the event six times, always with the same
// webhook-id, each signed (webhooks.Verify), and the delivery is
// succeeded once, after six attempts.
func TestWebhookDeliveryRetriesUntilAcknowledged(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 5 {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "not yet")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	id := subscribe(t, e, rcv.URL)
	tok := createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the delivery to succeed", func() bool {
		d := deliveries(t, e, id)
		return len(d) == 1 && d[0].Status == tokenvault.DeliverySucceeded
	})
	hits := rcv.Got()
	if len(hits) != 6 {
		t.Fatalf("%d requests, want 6", len(hits))
	}
	for i, h := range hits {
		if err := webhooks.Verify(hookSecret, h.Header, h.Body); err != nil {
			t.Errorf("request %d: %v", i+1, err)
		}
		if h.Header.Get(webhooks.HeaderID) != hits[0].Header.Get(webhooks.HeaderID) {
			t.Errorf("request %d has webhook-id %q, the first %q", i+1, h.Header.Get(webhooks.HeaderID), hits[0].Header.Get(webhooks.HeaderID))
		}
		var ev tokenvault.WebhookEvent
		if err := json.Unmarshal(h.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event.ID != h.Header.Get(webhooks.HeaderID) || ev.Event.Type != tokenvault.EventTokenCreated || ev.DeliveredAt.IsZero() {
			t.Errorf("request %d: event %+v", i+1, ev)
		}
		if strings.Contains(string(h.Body), "secret-data-42") || !strings.Contains(string(h.Body), tok.ID) {
			t.Errorf("request %d body %s", i+1, h.Body)
		}
	}
	d := deliveries(t, e, id)[0]
	if d.Attempts != 6 || d.ResponseStatus != 204 || d.Error != "" || d.NextAttemptAt != nil || d.EventID != hits[0].Header.Get(webhooks.HeaderID) {
		t.Errorf("delivery %+v", d)
	}
	if status, _, failing, _ := vaulttest.WebhookState(e.V, e.Boot.Tenant.ID, id); status != tokenvault.WebhookEnabled || !failing.IsZero() {
		t.Errorf("webhook %s, failing since %v: a success clears it", status, failing)
	}
}

// TestWebhookDeliveryGivesUp: past the schedule the delivery is failed,
// with the last answer's status, a short prefix of its body and no more.
func TestWebhookDeliveryGivesUp(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Schedule = []time.Duration{10 * time.Millisecond} })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, strings.Repeat("x", 1000))
	})
	id := subscribe(t, e, rcv.URL)
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the delivery to fail", func() bool {
		d := deliveries(t, e, id)
		return len(d) == 1 && d[0].Status == tokenvault.DeliveryFailed
	})
	d := deliveries(t, e, id)[0]
	if d.Attempts != 2 || d.ResponseStatus != 500 || len(d.Response) != 256 || d.Error == "" || d.NextAttemptAt != nil {
		t.Errorf("delivery %+v", d)
	}
	if len(rcv.Got()) != 2 {
		t.Errorf("%d requests, want 2", len(rcv.Got()))
	}
}

// TestWebhook410DisablesAndMails: a 410 disables the webhook (reason
// "gone") and tells its notify_email, naming the webhook and never the
// event; its later events are not queued.
func TestWebhook410DisablesAndMails(t *testing.T) {
	mailer := &testfake.Mailer{}
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Mailer = mailer })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	// The owner's address: a member's, so the notice names the webhook.
	id := subscribe(t, e, rcv.URL, func(h *vaulttest.DeliveryHook) { h.NotifyEmail = "owner@example.com" })
	key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
	createToken(t, e, key)
	vaulttest.WaitUntil(t, "the mail", func() bool { return len(mailer.WebhooksDisabled()) == 1 })
	m := mailer.WebhooksDisabled()[0]
	if m.To != "owner@example.com" || m.WebhookID != id || m.Reason != "gone" || m.Name != "hook" || !m.Verified || m.TenantID != e.Boot.Tenant.ID {
		t.Errorf("mail %+v", m)
	}
	status, reason, _, err := vaulttest.WebhookState(e.V, e.Boot.Tenant.ID, id)
	if err != nil || status != tokenvault.WebhookDisabled || reason != "gone" {
		t.Errorf("webhook %s (%s), %v", status, reason, err)
	}
	d := deliveries(t, e, id)
	if len(d) != 1 || d[0].Status != tokenvault.DeliveryFailed || d[0].ResponseStatus != 410 {
		t.Errorf("deliveries %+v", d)
	}
	createToken(t, e, key)
	if d := deliveries(t, e, id); len(d) != 1 {
		t.Errorf("a disabled webhook got %d deliveries", len(d))
	}
	if len(rcv.Got()) != 1 {
		t.Errorf("%d requests", len(rcv.Got()))
	}
}

// TestWebhookDisabledAfterFailingTooLong: a webhook failing without a
// success for DisableAfter is disabled (reason "failing") and its
// notify_email told; its pending deliveries are failed.
func TestWebhookDisabledAfterFailingTooLong(t *testing.T) {
	mailer := &testfake.Mailer{}
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) {
		o.Mailer = mailer
		o.Webhooks.DisableAfter = time.Second
		o.Webhooks.Schedule = []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
			300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
	})
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) })
	id := subscribe(t, e, rcv.URL)
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the mail", func() bool { return len(mailer.WebhooksDisabled()) == 1 })
	if m := mailer.WebhooksDisabled()[0]; m.Reason != "failing" || m.WebhookID != id {
		t.Errorf("mail %+v", m)
	}
	if status, reason, _, _ := vaulttest.WebhookState(e.V, e.Boot.Tenant.ID, id); status != tokenvault.WebhookDisabled || reason != "failing" {
		t.Errorf("webhook %s (%s)", status, reason)
	}
	vaulttest.WaitUntil(t, "the delivery to be failed", func() bool {
		d := deliveries(t, e, id)
		return len(d) == 1 && d[0].Status == tokenvault.DeliveryFailed
	})
}

// TestWebhookRetryAfterHonoured: a 503 with Retry-After: 2 delays the
// next attempt by about two seconds, though the schedule says 20 ms.
func TestWebhookRetryAfterHonoured(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	id := subscribe(t, e, rcv.URL)
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the delivery to succeed", func() bool {
		d := deliveries(t, e, id)
		return len(d) == 1 && d[0].Status == tokenvault.DeliverySucceeded
	})
	hits := rcv.Got()
	if len(hits) != 2 {
		t.Fatalf("%d requests", len(hits))
	}
	if gap := hits[1].At.Sub(hits[0].At); gap < 1500*time.Millisecond {
		t.Errorf("retried after %v despite Retry-After: 2", gap)
	}
}

// TestWebhookRedirectIsAFailure: a 302 is a failed attempt; its target
// is never requested.
func TestWebhookRedirectIsAFailure(t *testing.T) {
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Webhooks.Schedule = []time.Duration{} })
	target := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) {
		w.Header().Set("Location", target.URL)
		w.WriteHeader(http.StatusFound)
	})
	id := subscribe(t, e, rcv.URL)
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the delivery to fail", func() bool {
		d := deliveries(t, e, id)
		return len(d) == 1 && d[0].Status == tokenvault.DeliveryFailed
	})
	if d := deliveries(t, e, id)[0]; d.ResponseStatus != 302 || !strings.Contains(d.Error, "redirect") {
		t.Errorf("delivery %+v", d)
	}
	if n := len(target.Got()); n != 0 {
		t.Errorf("the redirect was followed: %d requests", n)
	}
}

// TestWebhookRotationOverlapSignsTwice: until previous_until, deliveries
// carry two v1 signatures, and each secret verifies them alone.
func TestWebhookRotationOverlapSignsTwice(t *testing.T) {
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	id := subscribe(t, e, rcv.URL, func(h *vaulttest.DeliveryHook) {
		h.PreviousSecret, h.PreviousUntil = oldSecret, time.Now().Add(time.Hour)
	})
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the delivery", func() bool { return len(rcv.Got()) == 1 })
	h := rcv.Got()[0]
	if sigs := strings.Fields(h.Header.Get(webhooks.HeaderSignature)); len(sigs) != 2 {
		t.Fatalf("signatures %q", sigs)
	}
	for _, s := range []string{hookSecret, oldSecret} {
		if err := webhooks.Verify(s, h.Header, h.Body); err != nil {
			t.Errorf("%v", err)
		}
	}
	// After the overlap, only the new secret signs.
	id2 := subscribe(t, e, rcv.URL, func(h *vaulttest.DeliveryHook) {
		h.PreviousSecret, h.PreviousUntil = oldSecret, time.Now().Add(-time.Second)
	})
	_ = id
	_ = id2
	createToken(t, e, e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key)
	vaulttest.WaitUntil(t, "the deliveries", func() bool { return len(rcv.Got()) == 3 })
	two := 0
	for _, h := range rcv.Got()[1:] {
		if len(strings.Fields(h.Header.Get(webhooks.HeaderSignature))) == 2 {
			two++
		}
	}
	if two != 1 {
		t.Errorf("%d of the second event's two deliveries carry two signatures, want 1 (the first webhook's)", two)
	}
}
