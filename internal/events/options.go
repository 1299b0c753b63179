package events

import "time"

// Options bound and time (the root's WebhookOptions) the delivery of events to webhook
// subscriptions (docs/webhooks.md). The zero value of each field means the
// default its documentation names; WithDefaults fills them in.
type Options struct {
	// MaxPerTenant bounds the webhooks one tenant may have: each event
	// fans out to at most this many deliveries, so the bound is also the
	// most work one tenant's change can queue. Zero (or negative):
	// DefaultMaxPerTenant.
	MaxPerTenant int
	// Schedule is the wait before each attempt after the first, which is
	// made at once: after the last one fails the delivery is given up
	// (status "failed"; it can be redelivered). Each wait is drawn between
	// 80% and 120% of its value (jitter). Nil: DefaultSchedule.
	Schedule []time.Duration
	// Timeout bounds one attempt, from dialling to the end of the
	// receiver's answer. Zero (or negative): DefaultTimeout.
	Timeout time.Duration
	// DisableAfter is how long a webhook may fail without one success
	// before the Vault disables it and tells its notify_email. Zero (or
	// negative): DefaultDisableAfter.
	DisableAfter time.Duration
	// SecretOverlap is how long after a rotation deliveries are signed with
	// the old secret as well as the new. Zero (or negative):
	// DefaultSecretOverlap.
	SecretOverlap time.Duration
	// ConcurrencyPerWebhook and ConcurrencyPerTenant bound the attempts
	// one instance has in flight to one webhook and to one tenant's
	// webhooks, so that a slow receiver holds only its own slots. Zero (or
	// negative): the defaults named after them.
	ConcurrencyPerWebhook int
	ConcurrencyPerTenant  int
	// Lease is how long an instance holds a delivery it is attempting
	// before another instance sharing the store may take it: longer than
	// Timeout (a Lease not longer is raised to Timeout + 30 s). Zero (or
	// negative): DefaultLease.
	Lease time.Duration
	// PollInterval is how often the dispatcher looks for deliveries that
	// came due (retries, and events other instances wrote); events this
	// instance writes are picked up as soon as they commit. Zero (or
	// negative): DefaultPollInterval.
	PollInterval time.Duration
	// MaxPendingPerWebhook and MaxPendingPerTenant bound the deliveries
	// pending (queued or waiting for a retry) to one webhook and to all of
	// one tenant's webhooks. At either, a test event or a redelivery is
	// refused (RateLimited) and an event of an ordinary write is dropped
	// for that webhook, counted and logged, the write going on
	// (pending.go). Zero (or negative): the defaults named after
	// them.
	MaxPendingPerWebhook int
	MaxPendingPerTenant  int
	// DeliveryRetention is how long a finished delivery (succeeded or
	// given up) is kept for GET /webhooks/{id}/deliveries and redelivery.
	// Zero (or negative): DefaultDeliveryRetention.
	DeliveryRetention time.Duration
}

// Defaults of Options (the root names each DefaultWebhook<Name>,
// and DefaultMaxWebhooksPerTenant).
const (
	DefaultMaxPerTenant          = 10
	DefaultTimeout               = 20 * time.Second
	DefaultDisableAfter          = 5 * 24 * time.Hour
	DefaultSecretOverlap         = 24 * time.Hour
	DefaultConcurrencyPerWebhook = 4
	DefaultConcurrencyPerTenant  = 8
	DefaultLease                 = 2 * time.Minute
	DefaultPollInterval          = time.Second
	DefaultDeliveryRetention     = 7 * 24 * time.Hour
	DefaultMaxPendingPerWebhook  = 10000
	DefaultMaxPendingPerTenant   = 20000
)

// DefaultSchedule is the Standard Webhooks advice: after the first
// attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, so a
// delivery is tried ten times over about three and a half days.
func DefaultSchedule() []time.Duration {
	return []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
		5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
}

// WithDefaults is o with every zero field set to its default, and Lease
// raised above Timeout (LeaseAbove).
func (o Options) WithDefaults() Options {
	if o.MaxPerTenant <= 0 {
		o.MaxPerTenant = DefaultMaxPerTenant
	}
	if o.Schedule == nil {
		o.Schedule = DefaultSchedule()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.DisableAfter <= 0 {
		o.DisableAfter = DefaultDisableAfter
	}
	if o.SecretOverlap <= 0 {
		o.SecretOverlap = DefaultSecretOverlap
	}
	if o.ConcurrencyPerWebhook <= 0 {
		o.ConcurrencyPerWebhook = DefaultConcurrencyPerWebhook
	}
	if o.ConcurrencyPerTenant <= 0 {
		o.ConcurrencyPerTenant = DefaultConcurrencyPerTenant
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxPendingPerWebhook <= 0 {
		o.MaxPendingPerWebhook = DefaultMaxPendingPerWebhook
	}
	if o.MaxPendingPerTenant <= 0 {
		o.MaxPendingPerTenant = DefaultMaxPendingPerTenant
	}
	if o.DeliveryRetention <= 0 {
		o.DeliveryRetention = DefaultDeliveryRetention
	}
	o.Lease = LeaseAbove(o.Lease, o.Timeout)
	return o
}

// LeaseAbove is lease, or, when it is not longer than timeout (an attempt
// could outlive its claim, and another instance attempt the delivery at
// the same time), timeout and 30 s more.
func LeaseAbove(lease, timeout time.Duration) time.Duration {
	if lease <= timeout {
		return timeout + 30*time.Second
	}
	return lease
}
