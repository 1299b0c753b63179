package tokenvault

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/events"
)

// WebhookOptions bound and time the delivery of events to webhook
// subscriptions (docs/webhooks.md). The zero value of each field means the
// default its documentation names; DefaultOptions fills them in.
type WebhookOptions = events.Options

// Webhook defaults (WebhookOptions).
const (
	DefaultMaxWebhooksPerTenant         = events.DefaultMaxPerTenant
	DefaultWebhookTimeout               = events.DefaultTimeout
	DefaultWebhookDisableAfter          = events.DefaultDisableAfter
	DefaultWebhookSecretOverlap         = events.DefaultSecretOverlap
	DefaultWebhookConcurrencyPerWebhook = events.DefaultConcurrencyPerWebhook
	DefaultWebhookConcurrencyPerTenant  = events.DefaultConcurrencyPerTenant
	DefaultWebhookLease                 = events.DefaultLease
	DefaultWebhookPollInterval          = events.DefaultPollInterval
	DefaultWebhookDeliveryRetention     = events.DefaultDeliveryRetention
	DefaultWebhookMaxPendingPerWebhook  = events.DefaultMaxPendingPerWebhook
	DefaultWebhookMaxPendingPerTenant   = events.DefaultMaxPendingPerTenant
)

// DefaultWebhookSchedule is the Standard Webhooks advice: after the first
// attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, so a
// delivery is tried ten times over about three and a half days.
func DefaultWebhookSchedule() []time.Duration { return events.DefaultSchedule() }
