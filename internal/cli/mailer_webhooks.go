package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/smtpmail"
)

// The webhook-disabled notices (tokenvault.WebhookNotifier) go the way
// invitations do: by SMTP when configured, else only into the log.

func (m unsentMailer) SendWebhookDisabled(_ context.Context, d tokenvault.WebhookDisabledMail) error {
	m.log.Warn("webhook disabled; its notify_email is not told (no SMTP configured)",
		"tenant", d.TenantID, "webhook", d.WebhookID, "reason", d.Reason, "recipient_domain", domainOf(d.To))
	return nil
}

func (m loggedMailer) SendWebhookDisabled(ctx context.Context, d tokenvault.WebhookDisabledMail) error {
	n, ok := m.m.(tokenvault.WebhookNotifier)
	if !ok {
		return nil
	}
	err := n.SendWebhookDisabled(ctx, d)
	attrs := []any{"tenant", d.TenantID, "webhook", d.WebhookID, "reason", d.Reason, "recipient_domain", domainOf(d.To)}
	var se *smtpmail.Error
	switch {
	case err == nil:
		m.log.Info("webhook disabled notice e-mailed", attrs...)
	case errors.As(err, &se):
		m.log.Warn("webhook disabled notice not sent", append(attrs, "temporary", se.Temporary(), "err", se.Error())...)
	default:
		m.log.Warn("webhook disabled notice not sent", append(attrs, "err_type", fmt.Sprintf("%T", err))...)
	}
	return err
}

var (
	_ tokenvault.WebhookNotifier = unsentMailer{}
	_ tokenvault.WebhookNotifier = loggedMailer{}
)
