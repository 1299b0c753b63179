package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestWebhookNoticeToUnverifiedAddress: a webhook created over HTTP with
// a name and URL of the tenant's choosing and a notify_email that is no
// member's address is disabled (410); the notice carries neither the
// name nor the URL, and says the address is not verified. Once that
// address is a member's (an accepted invitation proves it), a notice
// names the webhook.
func TestWebhookNoticeToUnverifiedAddress(t *testing.T) {
	ctx := context.Background()
	mailer := &testfake.Mailer{}
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Mailer = mailer })
	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, nil)
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	req := tokenvault.WebhookRequest{Name: "Your account is locked: call +1 555 0100", URL: rcv.URL + "/login",
		Events: []string{tokenvault.EventTokenCreated}, NotifyEmail: "victim@example.com"}
	w, err := c.CreateWebhook(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TestWebhook(ctx, e.Mgmt, w.ID); err != nil {
		t.Fatal(err)
	}
	vaulttest.WaitUntil(t, "the notice", func() bool { return len(mailer.WebhooksDisabled()) == 1 })
	m := mailer.WebhooksDisabled()[0]
	if m.Verified || m.Name != "" || m.URL != "" || m.WebhookID != w.ID || m.Reason != "gone" {
		t.Errorf("the notice to an unverified address: %+v", m)
	}

	// The owner's address is a member's: its notice names the webhook.
	other := e.Tenant(t, "Other")
	w2, err := e.V.CreateWebhook(ctx, other.Application.Key, tokenvault.WebhookRequest{Name: "orders", URL: rcv.URL,
		Events: []string{tokenvault.EventTokenCreated}, NotifyEmail: "Owner@Example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.TestWebhook(ctx, other.Application.Key, w2.ID); err != nil {
		t.Fatal(err)
	}
	vaulttest.WaitUntil(t, "the second notice", func() bool { return len(mailer.WebhooksDisabled()) == 2 })
	if m := mailer.WebhooksDisabled()[1]; !m.Verified || m.Name != "orders" || m.URL != rcv.URL {
		t.Errorf("the notice to the owner: %+v", m)
	}
}
