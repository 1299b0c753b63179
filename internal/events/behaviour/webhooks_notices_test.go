package events_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// A tenant cannot turn the disabled-webhook notice into a mail bomb: its
// receiver answers 410, it enables the webhook again and sends a test
// event, three times over; the webhook is disabled each time, and its
// notify_email (an address the tenant chose) gets one mail.
func TestWebhookNoticesCannotBeForced(t *testing.T) {
	ctx := context.Background()
	mailer := &testfake.Mailer{}
	e := vaulttest.DeliveryEnv(t, func(o *tokenvault.Options) { o.Mailer = mailer })
	rcv := vaulttest.NewHookReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	id := subscribe(t, e, rcv.URL)
	enabled := tokenvault.WebhookRequest{Name: "hook", URL: rcv.URL, Events: []string{tokenvault.EventTokenCreated},
		NotifyEmail: "victim@example.com", Status: tokenvault.WebhookEnabled}
	for round := 1; round <= 3; round++ {
		if _, err := e.V.UpdateWebhook(ctx, e.Mgmt, id, enabled); err != nil {
			t.Fatalf("round %d: UpdateWebhook: %v", round, err)
		}
		if _, err := e.V.TestWebhook(ctx, e.Mgmt, id); err != nil {
			t.Fatalf("round %d: TestWebhook: %v", round, err)
		}
		vaulttest.WaitUntil(t, "the webhook to be disabled", func() bool {
			status, reason, _, err := vaulttest.WebhookState(e.V, e.Boot.Tenant.ID, id)
			return err == nil && status == tokenvault.WebhookDisabled && reason == "gone"
		})
	}
	if n := len(mailer.WebhooksDisabled()); n != 1 {
		t.Errorf("%d notices sent for three disables in an hour, want 1", n)
	}
}
