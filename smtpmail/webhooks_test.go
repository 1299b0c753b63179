package smtpmail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/smtptest"
	"github.com/tokenvault/tokenvault/smtpmail"
)

// TestSendWebhookDisabled: the notice names the webhook and the reason,
// and its name cannot inject headers.
func TestSendWebhookDisabled(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	m := mailer(t, srv, smtpmail.Config{TLS: smtpmail.NoTLS})
	d := tokenvault.WebhookDisabledMail{To: "ops@example.com", TenantID: "0190a0b0-0000-7000-8000-000000000001",
		WebhookID: "0190a0b0-0000-7000-8000-000000000003", Name: "orders\r\nBcc: evil@example.com", URL: "https://hooks.example.com/x",
		Reason: "gone", DisabledAt: time.Date(2030, 1, 2, 15, 4, 0, 0, time.UTC), Verified: true}
	if err := m.SendWebhookDisabled(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	msg, h, body := received(t, srv)
	if len(msg.To) != 1 || msg.To[0] != "ops@example.com" {
		t.Errorf("recipients %v", msg.To)
	}
	if s := subject(t, h); !strings.Contains(s, "orders") || h.Get("Bcc") != "" {
		t.Errorf("subject %q, Bcc %q", s, h.Get("Bcc"))
	}
	for _, want := range []string{d.WebhookID, d.URL, "410 Gone"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
}

// TestSendWebhookDisabledUnverified: to an address that is not a
// member's of the tenant, the notice is a fixed text: the ids, the
// reason and the time, none of the tenant's words (name, URL), even were
// a Vault to leave them in.
func TestSendWebhookDisabledUnverified(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	m := mailer(t, srv, smtpmail.Config{TLS: smtpmail.NoTLS})
	d := tokenvault.WebhookDisabledMail{To: "someone@example.com", TenantID: "0190a0b0-0000-7000-8000-000000000001",
		WebhookID: "0190a0b0-0000-7000-8000-000000000003", Name: "Your account is locked: call +1 555 0100",
		URL: "https://phish.example.com/login", Reason: "failing", DisabledAt: time.Date(2030, 1, 2, 15, 4, 0, 0, time.UTC)}
	if err := m.SendWebhookDisabled(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	_, h, body := received(t, srv)
	if s := subject(t, h); s != "A webhook was disabled on Token Vault" {
		t.Errorf("subject %q", s)
	}
	for _, tenantWords := range []string{"locked", "555", "phish"} {
		if strings.Contains(body, tenantWords) {
			t.Errorf("the body carries the tenant's %q:\n%s", tenantWords, body)
		}
	}
	for _, want := range []string{d.WebhookID, d.TenantID, "failed for too long"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
}
