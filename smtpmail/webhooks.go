package smtpmail

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/tokenvault/tokenvault"
)

var _ tokenvault.WebhookNotifier = (*Mailer)(nil)

// SendWebhookDisabled tells m.To that the Vault disabled a webhook: which
// one (id, name, URL) and why, never an event. To an address that is not
// Verified (not a member's of the tenant) it sends a fixed text naming
// only the ids, the reason and the time: nothing the tenant wrote. It
// returns an *Error when the message could not be handed to the server.
func (m *Mailer) SendWebhookDisabled(ctx context.Context, d tokenvault.WebhookDisabledMail) error {
	msg := gomail.NewMsg()
	msg.FromMailAddress(m.from)
	if err := msg.To(d.To); err != nil {
		return m.failDisabled(d, err)
	}
	if d.Verified {
		name := oneLine(d.Name)
		if name == "" {
			name = d.WebhookID
		}
		msg.Subject("Webhook " + name + " was disabled on Token Vault")
		msg.SetBodyString(gomail.TypeTextPlain, disabledBody(d, name))
	} else {
		msg.Subject("A webhook was disabled on Token Vault")
		msg.SetBodyString(gomail.TypeTextPlain, unverifiedDisabledBody(d))
	}
	msg.SetDate()
	msg.SetMessageID()
	timeout := m.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	c, err := gomail.NewClient(m.cfg.Host, append(m.opts, gomail.WithTimeout(timeout))...)
	if err != nil {
		return m.failDisabled(d, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return m.failDisabled(d, err)
	}
	return nil
}

// disabledBody is the text of the webhook-disabled e-mail.
func disabledBody(d tokenvault.WebhookDisabledMail, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Token Vault disabled the webhook %s (id %s) of tenant %s at %s.\n\n", name, d.WebhookID, d.TenantID,
		d.DisabledAt.UTC().Format("Mon, 2 Jan 2006 15:04 MST"))
	fmt.Fprintf(&b, "Its URL: %s\n\n", oneLine(d.URL))
	switch d.Reason {
	case "gone":
		b.WriteString("Why: the receiver answered 410 Gone, which asks for no more deliveries.\n\n")
	default:
		b.WriteString("Why: every delivery to it has failed for too long.\n\n")
	}
	b.WriteString("It receives no events while disabled. Fix the receiver, enable the webhook again\n" +
		"(PUT /webhooks/{id} with status enabled), and redeliver the events you need\n" +
		"(GET /webhooks/{id}/deliveries, POST /webhooks/{id}/deliveries/{delivery_id}/redeliver).\n")
	return b.String()
}

// unverifiedDisabledBody is the fixed text of the webhook-disabled
// e-mail to an address that is not a member's of the tenant: ids, the
// reason and the time, which the Vault chose; nothing the tenant wrote.
func unverifiedDisabledBody(d tokenvault.WebhookDisabledMail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Token Vault disabled the webhook %s of tenant %s at %s.\n\n", d.WebhookID, d.TenantID,
		d.DisabledAt.UTC().Format("Mon, 2 Jan 2006 15:04 MST"))
	switch d.Reason {
	case "gone":
		b.WriteString("Why: its receiver answered 410 Gone, which asks for no more deliveries.\n\n")
	default:
		b.WriteString("Why: every delivery to it has failed for too long.\n\n")
	}
	b.WriteString("This address was named to be told of it. The tenant's administrators can see\n" +
		"the webhook and enable it again. If you do not know this tenant, ignore this\n" +
		"message: it asks nothing of you and contains no link.\n")
	return b.String()
}

func (m *Mailer) failDisabled(d tokenvault.WebhookDisabledMail, err error) error {
	text := err.Error()
	if m.cfg.Password != "" {
		text = strings.ReplaceAll(text, m.cfg.Password, "[password]")
	}
	text = strings.ReplaceAll(text, d.To, "[recipient]@"+domain(d.To))
	return &Error{msg: fmt.Sprintf("smtpmail: webhook %s disabled notice to a recipient at %s not sent via %s: %s",
		d.WebhookID, domain(d.To), net.JoinHostPort(m.cfg.Host, fmt.Sprint(m.cfg.Port)), text)}
}
