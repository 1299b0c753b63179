package tokenvault

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Reasons the Vault disables a webhook (WebhookSubscription.DisabledReason).
const (
	DisabledGone    = events.DisabledGone
	DisabledFailing = events.DisabledFailing
)

// WebhookDisabledMail tells a webhook's notify_email that the Vault
// disabled it. It names the webhook and the reason, never an event; only
// a member's address is told the webhook's name and URL.
type WebhookDisabledMail = events.DisabledMail

// WebhookNotifier is implemented by a Mailer that can also tell a
// webhook's notify_email that the Vault disabled the webhook
// (internal/testfake's Mailer, smtpmail's and the server's do). A Mailer
// without it sends no such mail: the webhook's status and disabled_reason
// still say so, and the log records it.
type WebhookNotifier = events.Notifier

// The dispatcher (internal/events' Dispatcher) records how each attempt
// went in units of work of its own; what it needs of the Vault comes
// through its Config: the functions below.

// eventDropped counts an event dropped at a cap of pending deliveries
// (events.Config.Dropped).
func (v *Vault) eventDropped() {
	if v.metrics != nil {
		v.metrics.EventDelivery(EventDropped, 0)
	}
}

// eventOutcome reports how an attempt ended (events.Config.Outcome).
func (v *Vault) eventOutcome(o EventOutcome, lag time.Duration) {
	if v.metrics != nil {
		v.metrics.EventDelivery(o, lag)
	}
}

// webhookAutoDisabled reports a webhook the Vault disabled
// (events.Config.AutoDisabled).
func (v *Vault) webhookAutoDisabled(reason string) {
	if v.metrics != nil {
		v.metrics.WebhookAutoDisabled(reason)
	}
}

// webhookDisabledLine writes the audit line of webhook whid of tenant tid
// that the Vault disabled, in t (events.Config.Audit).
func (v *Vault) webhookDisabledLine(t *unit.Tx, tid, whid, message string) error {
	return (&txn{Tx: t, v: v}).Log(systemActor, tid, EntityWebhook, whid, OpUpdate, message)
}

// isMemberEmail reports whether email is a member's of tenant tid, in t
// (events.Config.IsMember).
func (v *Vault) isMemberEmail(t *unit.Tx, tid, email string) (bool, error) {
	member, err := (&txn{Tx: t, v: v}).memberWith(tid, "", email)
	return member != nil, err
}

// forgetWebhooksIn is forgetWebhooks in t (events.Config.Forget).
func (v *Vault) forgetWebhooksIn(t *unit.Tx, tid string) {
	(&txn{Tx: t, v: v}).forgetWebhooks(tid)
}
