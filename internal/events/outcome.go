package events

import (
	"context"
	"errors"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Recording an attempt: the delivery's state, its next due time or its
// end, and the webhook's health. 2xx acknowledges; 410 disables the
// webhook (reason "gone"); any other failure is retried after the next
// wait of Options.Schedule (±20%), or after the receiver's
// Retry-After on 429, 502, 503 and 504 (capped at 24 h), until the
// schedule is spent, when the delivery is failed. A webhook that has
// failed without one success for DisableAfter is disabled (reason
// "failing"). Its notify_email is told of either, never with event data.

// Outcome is how one attempt to deliver an event ended (the root's
// EventOutcome), for Config.Outcome and the Vault's metrics.
type Outcome string

// Outcomes of an attempt, and of an event not queued.
const (
	Delivered Outcome = "delivered" // the receiver answered 2xx
	Retried   Outcome = "retried"   // it failed and will be tried again
	Failed    Outcome = "failed"    // it failed and the delivery was given up
	Gone      Outcome = "gone"      // the receiver answered 410: the webhook is disabled
	// Dropped: the event was not queued to a webhook at a cap of pending
	// deliveries (Options.MaxPendingPerWebhook, MaxPendingPerTenant); the
	// write that emitted it went on.
	Dropped Outcome = "dropped"
)

// DisabledMail (the root's WebhookDisabledMail) tells a webhook's notify_email that the Vault
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
type DisabledMail struct {
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

// Notifier (the root's WebhookNotifier) is implemented by a Mailer that can also tell a
// webhook's notify_email that the Vault disabled the webhook
// (internal/testfake's Mailer, smtpmail's and the server's do). A Mailer
// without it sends no such mail: the webhook's status and disabled_reason
// still say so, and the log records it.
type Notifier interface {
	SendWebhookDisabled(ctx context.Context, m DisabledMail) error
}

// attemptDelivery makes one attempt of j (Send) and records how it went.
func (d *Dispatcher) attemptDelivery(j job) {
	a := d.Send(d.bg, &j.hook, &j.rec)
	if d.bg.Err() != nil {
		// Closing: the attempt was cut short. Its claim expires after
		// Lease and another instance, or the next Open, tries again.
		return
	}
	d.recordAttempt(j, a)
}

// recordAttempt stores how attempt a of job j went, under j's claim: an
// instance whose claim expired (another took the delivery over) records
// nothing.
func (d *Dispatcher) recordAttempt(j job, a Attempt) {
	var (
		disabled *DisabledMail
		outcome  Outcome
		lag      time.Duration
	)
	err := d.cfg.Work.Update(d.bg, func(t *unit.Tx) error {
		disabled, outcome, lag = nil, "", 0
		tk := barrier.Tenant(j.rec.TenantID)
		var rec Delivery
		ok, err := t.GetRecord(tk.WebhookDelivery(j.rec.WebhookID, j.rec.ID), &rec)
		if err != nil || !ok || rec.Claim != j.rec.Claim {
			return d.skipGone(err)
		}
		if err := t.Delete(tk.WebhookDue(rec.WebhookID, rec.NextAttemptAt, rec.ID)); err != nil {
			return err
		}
		var hook Webhook
		ok, err = t.GetRecord(tk.Record(unit.EntityWebhook, rec.WebhookID), &hook)
		if err != nil {
			return d.skipGone(err)
		}
		if !ok {
			// Deleted while it was attempted: the delivery goes with it.
			return d.DeleteDelivery(t, rec.TenantID, rec.WebhookID, rec.ID)
		}
		rec.Attempts++
		rec.LastAttemptAt, rec.ResponseStatus, rec.Duration = a.At, a.Status, a.Duration
		rec.Response, rec.Error = a.Response, a.Err
		rec.Claim, rec.ClaimedUntil = "", time.Time{}
		hookChanged := false
		switch {
		case a.OK():
			rec.Status = DeliverySucceeded
			outcome, lag = Delivered, t.Now.Sub(rec.CreatedAt)
			if !hook.FailingSince.IsZero() {
				hook.FailingSince, hookChanged = time.Time{}, true
			}
		case a.Status == 410:
			rec.Status, outcome = DeliveryFailed, Gone
			if hook.Status == Enabled {
				disabled, hookChanged = disable(&hook, DisabledGone, t.Now), true
			}
		default:
			if hook.FailingSince.IsZero() {
				hook.FailingSince, hookChanged = a.At, true
			} else if hook.Status == Enabled && t.Now.Sub(hook.FailingSince) >= d.cfg.Options.DisableAfter {
				disabled, hookChanged = disable(&hook, DisabledFailing, t.Now), true
			}
			switch {
			case hook.Status != Enabled:
				rec.Status, outcome = DeliveryFailed, Failed
			case rec.Attempts > len(d.cfg.Options.Schedule):
				rec.Status, outcome = DeliveryFailed, Failed
			default:
				wait := outbound.Jitter(d.cfg.Options.Schedule[rec.Attempts-1])
				if a.RetryAfter > 0 {
					wait = a.RetryAfter
				}
				outcome = Retried
				rec.NextAttemptAt = t.Now.Add(wait)
			}
		}
		if rec.Status != DeliveryPending {
			rec.NextAttemptAt = t.Now.Add(d.cfg.Options.DeliveryRetention)
		}
		if err := d.PutDelivery(t, &rec); err != nil {
			return err
		}
		if hookChanged {
			if err := t.PutRecord(tk.Record(unit.EntityWebhook, hook.ID), &hook); err != nil {
				return err
			}
			if disabled != nil {
				// Its status changed: every Vault's cached
				// subscriptions go (Forget). A
				// change of failing_since alone changes none.
				Forget(t, hook.TenantID)
			}
		}
		if disabled != nil && disabled.To != "" {
			if err := d.verifyNotice(t, disabled); err != nil {
				return err
			}
		}
		if disabled != nil {
			return t.Log(unit.SystemActor, hook.TenantID, unit.EntityWebhook, hook.ID, unit.OpUpdate, "Webhook disabled ("+disabled.Reason+")")
		}
		return nil
	})
	if err != nil {
		if d.bg.Err() == nil {
			d.cfg.Logger.Warn("tokenvault: webhook attempt not recorded", "delivery", j.rec.ID, "err", err)
		}
		return
	}
	if outcome != "" && d.cfg.Outcome != nil {
		d.cfg.Outcome(outcome, lag)
	}
	if disabled != nil {
		d.disabled(*disabled)
	}
}

// verifyNotice marks m Verified when its recipient is a member of its
// tenant, and otherwise takes the tenant's words (name, URL) out of it.
func (d *Dispatcher) verifyNotice(t *unit.Tx, m *DisabledMail) error {
	member, err := d.cfg.IsMember(t, m.TenantID, m.To)
	if err != nil {
		return err
	}
	m.Verified = member
	if !m.Verified {
		m.Name, m.URL = "", ""
	}
	return nil
}

// skipGone turns Config.TenantGone (the tenant is being deleted) into
// nothing to record.
func (d *Dispatcher) skipGone(err error) error {
	if d.gone(err) {
		return nil
	}
	return err
}

// gone reports whether err is Config.TenantGone.
func (d *Dispatcher) gone(err error) bool {
	return d.cfg.TenantGone != nil && errors.Is(err, d.cfg.TenantGone)
}

// disable marks hook disabled by the Vault for reason, at now, and
// returns the mail that tells its notify_email.
func disable(hook *Webhook, reason string, now time.Time) *DisabledMail {
	hook.Status, hook.DisabledReason, hook.ModifiedAt = Disabled, reason, now
	return &DisabledMail{To: hook.NotifyEmail, TenantID: hook.TenantID, WebhookID: hook.ID, Name: hook.Name,
		URL: hook.URL, Reason: reason, DisabledAt: now}
}

// disabled reports a webhook the Vault disabled: to the metrics,
// the log, and its notify_email when it has one, the mailer can, and the
// notice bounds allow (notices.go).
func (d *Dispatcher) disabled(m DisabledMail) {
	if d.cfg.AutoDisabled != nil {
		d.cfg.AutoDisabled(m.Reason)
	}
	d.cfg.Logger.Warn("tokenvault: webhook disabled", "tenant", m.TenantID, "webhook", m.WebhookID, "reason", m.Reason)
	n, ok := d.cfg.Mailer.(Notifier)
	if m.To == "" || !ok {
		return
	}
	if !d.AllowNotice(Key{Tenant: m.TenantID, Webhook: m.WebhookID}, d.cfg.Now()) {
		d.cfg.Logger.Warn("tokenvault: webhook disabled mail not sent: too many of this webhook or tenant in the last hour",
			"tenant", m.TenantID, "webhook", m.WebhookID)
		return
	}
	ctx, cancel := context.WithTimeout(d.bg, 30*time.Second)
	defer cancel()
	if err := n.SendWebhookDisabled(ctx, m); err != nil {
		d.cfg.Logger.Warn("tokenvault: webhook disabled mail not sent", "webhook", m.WebhookID, "err", err)
	}
}
