package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/outbound"
)

// Recording an attempt: the delivery's state, its next due time or its
// end, and the webhook's health. 2xx acknowledges; 410 disables the
// webhook (reason "gone"); any other failure is retried after the next
// wait of WebhookOptions.Schedule (±20%), or after the receiver's
// Retry-After on 429, 502, 503 and 504 (capped at 24 h), until the
// schedule is spent, when the delivery is failed. A webhook that has
// failed without one success for DisableAfter is disabled (reason
// "failing"). Its notify_email is told of either, never with event data.

// Reasons the Vault disables a webhook (WebhookSubscription.DisabledReason).
const (
	DisabledGone    = events.DisabledGone
	DisabledFailing = events.DisabledFailing
)

// WebhookDisabledMail tells a webhook's notify_email that the Vault
// disabled it. It names the webhook and the reason, never an event.
//
// A notify_email is any address the tenant typed, so a notice carrying
// the tenant's words (the webhook's name and URL) to it would let a
// tenant send text of its choosing, under the Vault's name, to anyone: a
// phishing vector. Only an address the tenant has verified gets them:
// the e-mail of a member of the tenant (the owner the operator named at
// its creation, or a user who accepted an invitation mailed to that
// address). For any other address Verified is false, Name and URL are
// empty, and a mailer sends a fixed text naming only the ids, the
// reason and the time (smtpmail does).
type WebhookDisabledMail struct {
	To         string
	TenantID   string
	WebhookID  string
	Name       string // empty unless Verified
	URL        string // empty unless Verified
	Reason     string // "gone" (the receiver answered 410) or "failing"
	DisabledAt time.Time
	// Verified reports whether To is the e-mail of a member of the
	// tenant, to whom the tenant's words may go.
	Verified bool
}

// WebhookNotifier is implemented by a Mailer that can also tell a
// webhook's notify_email that the Vault disabled the webhook
// (internal/testfake's Mailer, smtpmail's and the server's do). A Mailer
// without it sends no such mail: the webhook's status and disabled_reason
// still say so, and the log records it.
type WebhookNotifier interface {
	SendWebhookDisabled(ctx context.Context, m WebhookDisabledMail) error
}

// attemptDelivery makes one attempt of j (events.Dispatcher.Send: the
// envelope, signed, POSTed to the webhook's URL, held to the outbound
// policy again) and records how it went.
func (v *Vault) attemptDelivery(j job) {
	a := v.dispatch.Send(v.bg, &j.hook, &j.rec)
	if v.bg.Err() != nil {
		// Closing: the attempt was cut short. Its claim expires after
		// Lease and another instance, or the next Open, tries again.
		return
	}
	v.recordAttempt(j, a)
}

// recordAttempt stores how attempt a of job j went, under j's claim: an
// instance whose claim expired (another took the delivery over) records
// nothing.
func (v *Vault) recordAttempt(j job, a events.Attempt) {
	var (
		disabled *WebhookDisabledMail
		outcome  EventOutcome
		lag      time.Duration
	)
	err := v.update(v.bg, func(t *txn) error {
		disabled, outcome, lag = nil, "", 0
		tk := barrier.Tenant(j.rec.TenantID)
		var rec events.Delivery
		ok, err := t.GetRecord(tk.WebhookDelivery(j.rec.WebhookID, j.rec.ID), &rec)
		if err != nil || !ok || rec.Claim != j.rec.Claim {
			return skipGoneErr(err)
		}
		if err := t.Delete(tk.WebhookDue(rec.WebhookID, rec.NextAttemptAt, rec.ID)); err != nil {
			return err
		}
		var hook events.Webhook
		ok, err = t.GetRecord(tk.Record(EntityWebhook, rec.WebhookID), &hook)
		if err != nil {
			return skipGoneErr(err)
		}
		if !ok {
			// Deleted while it was attempted: the delivery goes with it.
			return t.v.dispatch.DeleteDelivery(t.Tx, rec.TenantID, rec.WebhookID, rec.ID)
		}
		rec.Attempts++
		rec.LastAttemptAt, rec.ResponseStatus, rec.Duration = a.At, a.Status, a.Duration
		rec.Response, rec.Error = a.Response, a.Err
		rec.Claim, rec.ClaimedUntil = "", time.Time{}
		hookChanged := false
		switch {
		case a.OK():
			rec.Status = DeliverySucceeded
			outcome, lag = EventDelivered, t.Now.Sub(rec.CreatedAt)
			if !hook.FailingSince.IsZero() {
				hook.FailingSince, hookChanged = time.Time{}, true
			}
		case a.Status == 410:
			rec.Status, outcome = DeliveryFailed, EventGone
			if hook.Status == WebhookEnabled {
				disabled, hookChanged = v.disable(&hook, DisabledGone, t.Now), true
			}
		default:
			if hook.FailingSince.IsZero() {
				hook.FailingSince, hookChanged = a.At, true
			} else if hook.Status == WebhookEnabled && t.Now.Sub(hook.FailingSince) >= v.webhooks.DisableAfter {
				disabled, hookChanged = v.disable(&hook, DisabledFailing, t.Now), true
			}
			switch {
			case hook.Status != WebhookEnabled:
				rec.Status, outcome = DeliveryFailed, EventFailed
			case rec.Attempts > len(v.webhooks.Schedule):
				rec.Status, outcome = DeliveryFailed, EventFailed
			default:
				wait := outbound.Jitter(v.webhooks.Schedule[rec.Attempts-1])
				if a.RetryAfter > 0 {
					wait = a.RetryAfter
				}
				outcome = EventRetried
				rec.NextAttemptAt = t.Now.Add(wait)
			}
		}
		if rec.Status != DeliveryPending {
			rec.NextAttemptAt = t.Now.Add(v.webhooks.DeliveryRetention)
		}
		if err := t.v.dispatch.PutDelivery(t.Tx, &rec); err != nil {
			return err
		}
		if hookChanged {
			if err := t.PutRecord(tk.Record(EntityWebhook, hook.ID), &hook); err != nil {
				return err
			}
			if disabled != nil {
				// Its status changed: every Vault's cached
				// subscriptions go (webhooks_subscriptions.go). A
				// change of failing_since alone changes none.
				t.forgetWebhooks(hook.TenantID)
			}
		}
		if disabled != nil && disabled.To != "" {
			if err := t.verifyNotice(disabled); err != nil {
				return err
			}
		}
		if disabled != nil {
			return t.log(systemActor, hook.TenantID, EntityWebhook, hook.ID, OpUpdate, "Webhook disabled ("+disabled.Reason+")")
		}
		return nil
	})
	if err != nil {
		if v.bg.Err() == nil {
			v.logger.Warn("tokenvault: webhook attempt not recorded", "delivery", j.rec.ID, "err", err)
		}
		return
	}
	if outcome != "" && v.metrics != nil {
		v.metrics.EventDelivery(outcome, lag)
	}
	if disabled != nil {
		v.webhookDisabled(*disabled)
	}
}

// eventDropped counts an event dropped at a cap of pending deliveries
// (events.Config.Dropped).
func (v *Vault) eventDropped() {
	if v.metrics != nil {
		v.metrics.EventDelivery(EventDropped, 0)
	}
}

// verifyNotice marks m Verified when its recipient is a member of its
// tenant, and otherwise takes the tenant's words (name, URL) out of it.
func (t *txn) verifyNotice(m *WebhookDisabledMail) error {
	member, err := t.memberWith(m.TenantID, "", m.To)
	if err != nil {
		return err
	}
	m.Verified = member != nil
	if !m.Verified {
		m.Name, m.URL = "", ""
	}
	return nil
}

// skipGoneErr turns errTenantGone into nothing to record.
func skipGoneErr(err error) error {
	_, err = skipGone(false, err)
	return err
}

// disable marks hook disabled by the Vault for reason, at now, and
// returns the mail that tells its notify_email.
func (v *Vault) disable(hook *events.Webhook, reason string, now time.Time) *WebhookDisabledMail {
	hook.Status, hook.DisabledReason, hook.ModifiedAt = WebhookDisabled, reason, now
	return &WebhookDisabledMail{To: hook.NotifyEmail, TenantID: hook.TenantID, WebhookID: hook.ID, Name: hook.Name,
		URL: hook.URL, Reason: reason, DisabledAt: now}
}

// webhookDisabled reports a webhook the Vault disabled: to the metrics,
// the log, and its notify_email when it has one, the mailer can, and the
// notice bounds allow (internal/events' notices.go).
func (v *Vault) webhookDisabled(m WebhookDisabledMail) {
	if v.metrics != nil {
		v.metrics.WebhookAutoDisabled(m.Reason)
	}
	v.logger.Warn("tokenvault: webhook disabled", "tenant", m.TenantID, "webhook", m.WebhookID, "reason", m.Reason)
	n, ok := v.mailer.(WebhookNotifier)
	if m.To == "" || !ok {
		return
	}
	if !v.dispatch.AllowNotice(events.Key{Tenant: m.TenantID, Webhook: m.WebhookID}, v.now()) {
		v.logger.Warn("tokenvault: webhook disabled mail not sent: too many of this webhook or tenant in the last hour",
			"tenant", m.TenantID, "webhook", m.WebhookID)
		return
	}
	ctx, cancel := context.WithTimeout(v.bg, 30*time.Second)
	defer cancel()
	if err := n.SendWebhookDisabled(ctx, m); err != nil {
		v.logger.Warn("tokenvault: webhook disabled mail not sent", "webhook", m.WebhookID, "err", err)
	}
}
