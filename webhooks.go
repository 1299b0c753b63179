package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/counts"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Webhook subscriptions: a tenant's URLs that receive the events of the
// catalogue (WebhookEventTypes) they subscribe to, signed with a secret
// of their own (docs/webhooks.md). Their management is for management
// applications (webhook:create|read|update|delete); each change is an
// audit line of entity type EntityWebhook. The feature is
// internal/events: these methods authorize the caller and call it in
// their unit of work; its Service queues the events every unit of work
// emits, and its Dispatcher delivers them.

// WebhookSubscription is a webhook as the API shows it. It is not the
// asynchronous reactor callback body, which is Webhook.
type WebhookSubscription = events.Subscription

// WebhookRequest is the body of CreateWebhook and UpdateWebhook. An
// update replaces every field: one left out takes its default.
type WebhookRequest = events.Request

// ListWebhooksRequest pages ListWebhooks.
type ListWebhooksRequest struct {
	PageRequest
}

// CreateWebhook subscribes a URL of the caller's tenant to events, with a
// new signing secret, which the answer alone shows. Requires
// webhook:create. A tenant has at most WebhookOptions.MaxPerTenant
// webhooks (default 10): one more is Conflict, until one is deleted.
//
// Returns Invalid for a request that fails its checks (naming the field:
// a URL that is not https or names a loopback, private or link-local host
// is refused on url), Conflict at the limit, Unauthenticated for a key
// that is missing, unknown or expired, RateLimited over a rate limit,
// PermissionDenied without webhook:create, StorageFull, or Internal.
func (v *Vault) CreateWebhook(ctx context.Context, key Credential, req WebhookRequest) (*WebhookSubscription, error) {
	secret := events.NewSecret()
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookCreate)
		if err != nil {
			return err
		}
		out, err = v.events.Create(t.Tx, p, req, secret)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetWebhook returns a webhook of the caller's tenant, without its
// secret. Requires webhook:read.
//
// Returns NotFound for a webhook that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:read, or
// Internal.
func (v *Vault) GetWebhook(ctx context.Context, key Credential, id string) (*WebhookSubscription, error) {
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookRead)
		if err != nil {
			return err
		}
		rec, err := events.Get(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = rec.API(t.Now)
		return t.logRead(p, EntityWebhook, id, "Webhook read")
	})
	return out, err
}

// ListWebhooks returns the webhooks of the caller's tenant, oldest first,
// without their secrets. Requires webhook:read. Pages work as in every
// list (PageRequest); a tenant has few webhooks (WebhookOptions.MaxPerTenant),
// so total_items is exact, on a cursor page too what follows the cursor.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:read, or
// Internal.
func (v *Vault) ListWebhooks(ctx context.Context, key Credential, req ListWebhooksRequest) (*Page[WebhookSubscription], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[WebhookSubscription]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookRead)
		if err != nil {
			return err
		}
		items, err := events.List(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		out = paging.Paginate(items, pg, func(w WebhookSubscription) string { return w.ID })
		return nil
	})
	return out, err
}

// UpdateWebhook replaces a webhook's name, url, events, status and
// notify_email; its secret stays (RotateWebhookSecret changes it).
// Requires webhook:update. Enabling a disabled webhook clears why the
// Vault disabled it and its failures: deliveries start again with the
// events that follow.
//
// Returns Invalid for a request that fails its checks (naming the field),
// NotFound for a webhook that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:update,
// StorageFull, or Internal.
func (v *Vault) UpdateWebhook(ctx context.Context, key Credential, id string, req WebhookRequest) (*WebhookSubscription, error) {
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		out, err = v.events.Replace(t.Tx, p, id, req)
		return err
	})
	return out, err
}

// DeleteWebhook deletes a webhook: it receives no event from then on.
// Requires webhook:delete.
//
// Returns NotFound for a webhook that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:delete,
// StorageFull, or Internal.
func (v *Vault) DeleteWebhook(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookDelete)
		if err != nil {
			return err
		}
		return v.events.Delete(t.Tx, p, id)
	})
}

// RotateWebhookSecret gives a webhook a new signing secret, which the
// answer alone shows. For WebhookOptions.SecretOverlap (default 24 hours)
// deliveries carry two signatures, one with each secret, so a receiver
// can move to the new one at its pace; a rotation within the overlap
// ends the older secret at once (only the last two sign). Requires
// webhook:update.
//
// Returns NotFound for a webhook that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:update,
// StorageFull, or Internal.
func (v *Vault) RotateWebhookSecret(ctx context.Context, key Credential, id string) (*WebhookSubscription, error) {
	secret := events.NewSecret()
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		out, err = v.events.Rotate(t.Tx, p, id, secret)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListWebhookEventTypes returns the names of the event catalogue, in the
// order of WebhookEventTypes (which also describes each, and needs no
// key). Requires webhook:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without webhook:read, or
// Internal.
func (v *Vault) ListWebhookEventTypes(ctx context.Context, key Credential) ([]string, error) {
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authorize(key, PermWebhookRead)
		return err
	})
	if err != nil {
		return nil, err
	}
	types := events.Types()
	out := make([]string, len(types))
	for i, e := range types {
		out[i] = e.Name
	}
	return out, nil
}

// Webhook statuses (the status field of a webhook).
const (
	WebhookEnabled  = events.Enabled
	WebhookDisabled = events.Disabled
)

// The deliveries of a webhook, as its owner sees them: recent attempts
// (GET /webhooks/{id}/deliveries), a redelivery, and a test event.

// WebhookDelivery is one event's delivery to one webhook: its state and
// its last attempt. It never holds the event's body nor more than a short
// prefix of the receiver's answer.
type WebhookDelivery = events.DeliveryInfo

// MaxDeliveriesPageSize bounds a page of ListWebhookDeliveries.
const MaxDeliveriesPageSize = events.MaxDeliveriesPageSize

// ListWebhookDeliveries lists the deliveries of webhook webhookID, newest
// first, a page at a time by cursor (req.Start is the After of the page
// before; Page may only be 0 or 1). Finished deliveries are kept for
// WebhookOptions.DeliveryRetention. Requires webhook:read. The
// pagination's TotalItems counts this page and, when more follow, one
// more: a lower bound.
//
// Returns Invalid for a bad page, size or cursor, NotFound for an
// unknown webhook (or another tenant's), Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit,
// PermissionDenied without webhook:read, or Internal.
func (v *Vault) ListWebhookDeliveries(ctx context.Context, key Credential, webhookID string, req PageRequest) (*Page[WebhookDelivery], error) {
	pg, err := events.DeliveriesPage(req)
	if err != nil {
		return nil, err
	}
	var out *Page[WebhookDelivery]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookRead)
		if err != nil {
			return err
		}
		out, err = events.Deliveries(t.Tx, p.TenantID, webhookID, pg)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RedeliverWebhookDelivery queues delivery deliveryID of webhook
// webhookID again, due now: pending, its attempts counted from zero, the
// same event (the same webhook-id) as before. Requires webhook:update.
//
// Returns NotFound for an unknown webhook or delivery (or another
// tenant's), Conflict when the webhook is disabled or the delivery is
// being attempted, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit or when a finished delivery
// would go past a cap of pending deliveries (internal/events' pending.go), PermissionDenied without
// webhook:update, or Internal.
func (v *Vault) RedeliverWebhookDelivery(ctx context.Context, key Credential, webhookID, deliveryID string) (*WebhookDelivery, error) {
	var out *WebhookDelivery
	err := v.events.UpdatePending(ctx, func(ut *unit.Tx) error {
		p, err := (&txn{Tx: ut, v: v}).authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		out, err = v.events.Redeliver(ut, p, webhookID, deliveryID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TestWebhook queues a webhook.test event to webhook webhookID only,
// whether or not it subscribes to webhook.test, and returns its
// delivery. The event's data is {"webhook": {id, name, url}, "actor"}.
// Requires webhook:update.
//
// Returns NotFound for an unknown webhook (or another tenant's),
// Conflict when it is disabled, Unauthenticated for a key that is
// missing, unknown or expired, RateLimited over a rate limit, at a cap
// of pending deliveries or with 10 test events pending to the webhook
// (internal/events' pending.go, with a RetryAfter),
// PermissionDenied without webhook:update, or Internal.
func (v *Vault) TestWebhook(ctx context.Context, key Credential, webhookID string) (*WebhookDelivery, error) {
	var out *WebhookDelivery
	err := v.events.UpdatePending(ctx, func(ut *unit.Tx) error {
		p, err := (&txn{Tx: ut, v: v}).authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		out, err = v.events.SendTest(ut, p, webhookID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delivery statuses (WebhookDelivery.Status).
const (
	DeliveryPending   = events.DeliveryPending
	DeliverySucceeded = events.DeliverySucceeded
	DeliveryFailed    = events.DeliveryFailed
)

// WebhookEventType is one entry of the event catalogue.
type WebhookEventType = events.Type

// Event types (WebhookEventInfo.Type): the catalogue's names
// (internal/events).
const (
	EventTokenCreated             = events.TokenCreated
	EventTokenUpdated             = events.TokenUpdated
	EventTokenDeleted             = events.TokenDeleted
	EventTokenExpired             = events.TokenExpired
	EventTokenPropertyExpired     = events.TokenPropertyExpired
	EventTokenRead                = events.TokenRead
	EventTokenIntentCreated       = events.TokenIntentCreated
	EventTokenIntentDeleted       = events.TokenIntentDeleted
	EventTokenIntentConverted     = events.TokenIntentConverted
	EventApplicationCreated       = events.ApplicationCreated
	EventApplicationUpdated       = events.ApplicationUpdated
	EventApplicationDeleted       = events.ApplicationDeleted
	EventApplicationKeyCreated    = events.ApplicationKeyCreated
	EventApplicationKeyDeleted    = events.ApplicationKeyDeleted
	EventAccessAnomaly            = events.AccessAnomaly
	EventProxyCreated             = events.ProxyCreated
	EventProxyUpdated             = events.ProxyUpdated
	EventProxyDeleted             = events.ProxyDeleted
	EventProxyInvoked             = events.ProxyInvoked
	EventReactorCreated           = events.ReactorCreated
	EventReactorUpdated           = events.ReactorUpdated
	EventReactorDeleted           = events.ReactorDeleted
	EventReactorInvoked           = events.ReactorInvoked
	EventReactorCompleted         = events.ReactorCompleted
	EventReactorFailed            = events.ReactorFailed
	EventSessionCreated           = events.SessionCreated
	EventSessionAuthorized        = events.SessionAuthorized
	EventTenantMemberCreated      = events.TenantMemberCreated
	EventTenantMemberDeleted      = events.TenantMemberDeleted
	EventTenantInvitationCreated  = events.TenantInvitationCreated
	EventTenantInvitationResent   = events.TenantInvitationResent
	EventTenantInvitationAccepted = events.TenantInvitationAccepted
	EventTenantInvitationDeleted  = events.TenantInvitationDeleted
	EventTenantPurposesUpdated    = events.TenantPurposesUpdated
	EventWebhookTest              = events.WebhookTest
	EventSubjectErased            = events.SubjectErased
)

// WebhookEventTypes returns the event catalogue. It needs no key: the
// catalogue is the same for everyone.
func WebhookEventTypes() []WebhookEventType { return events.Types() }

// WebhookEvent is the JSON body POSTed to a webhook: the envelope of the
// Standard Webhooks convention this service follows (docs/webhooks.md).
// It never holds token data, keys, secrets or detokenized values.
type WebhookEvent = events.Event

// WebhookEventInfo is one event.
type WebhookEventInfo = events.Info

// WebhookActor is who made the change an event tells of.
type WebhookActor = events.Actor

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

// openEvents makes the events feature of v (Open): its Service, which
// every unit of work emits through, and its Dispatcher, which delivers
// what they queue. What they need of the rest of the Vault comes as
// functions: the auth cache's generations, the Vault's rules for names,
// whether an address is a member's, and the metrics.
func (v *Vault) openEvents(opts WebhookOptions) {
	v.events = &events.Service{IDs: &v.ids, Policy: v.outbound, Counts: counts.Codec{}, Result: v.result,
		Gens:      v.auth.Gens,
		CheckName: validateName}
	v.dispatch = events.NewDispatcher(events.Config{Options: opts, HTTPClient: v.httpClient, Policy: v.outbound,
		Now: v.now, IDs: &v.ids, Logger: v.logger, Work: v.work, TenantGone: errTenantGone, Mailer: v.mailer,
		Subscriptions: v.events.Subscriptions, IsMember: v.isMemberEmail,
		Dropped: v.eventDropped, Outcome: v.eventOutcome, AutoDisabled: v.webhookAutoDisabled})
	v.events.Dispatch = v.dispatch
	v.work.EmitEventsWith(v.events)
}

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

// isMemberEmail reports whether email is a member's of tenant tid, in t
// (events.Config.IsMember).
func (v *Vault) isMemberEmail(t *unit.Tx, tid, email string) (bool, error) {
	member, err := tenants.FindMember(t, tid, "", email)
	return member != nil, err
}
