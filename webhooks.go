package tokenvault

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Webhook subscriptions: a tenant's URLs that receive the events of the
// catalogue (webhooks_events.go) they subscribe to, signed with a secret
// of their own (docs/webhooks.md). Their management is for management
// applications (webhook:create|read|update|delete); each change is an
// audit line of entity type EntityWebhook. The delivery of events is the
// dispatcher's (internal/events' Dispatcher).

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
		if err := v.validateWebhook(&req); err != nil {
			return err
		}
		if err := t.checkWebhookRoom(p.TenantID); err != nil {
			return err
		}
		rec := &events.Webhook{ID: t.v.ids.Next(t.Now), TenantID: p.TenantID, Secret: secret,
			CreatedBy: p.ActorID, CreatedAt: t.Now}
		req.Apply(rec)
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityWebhook, rec.ID), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.TenantID)
		out = rec.API(t.Now)
		out.Secret = secret
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, rec.ID, OpCreate, fmt.Sprintf("Webhook %q created", rec.Name))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkWebhookRoom refuses a webhook more when tenant tid has
// MaxPerTenant already, counted in the creating transaction.
func (t *txn) checkWebhookRoom(tid string) error {
	limit := t.v.webhooks.MaxPerTenant
	n := 0
	err := t.Scan(barrier.Tenant(tid).Records(EntityWebhook), "", limit, func(barrier.Key, string) error {
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n >= limit {
		return unit.Errorf(Conflict, "the tenant has %d webhooks, the most it may have; delete one first", limit)
	}
	return nil
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
		rec, err := t.mustWebhook(p.TenantID, id)
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
		recs, err := t.tenantWebhooks(p.TenantID)
		if err != nil {
			return err
		}
		items := make([]WebhookSubscription, len(recs))
		for i, r := range recs {
			items[i] = *r.API(t.Now)
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
		rec, err := t.mustWebhook(p.TenantID, id)
		if err != nil {
			return err
		}
		if err := v.validateWebhook(&req); err != nil {
			return err
		}
		wasDisabled := rec.Status == WebhookDisabled
		req.Apply(rec)
		switch {
		case rec.Status == WebhookEnabled && wasDisabled:
			rec.DisabledReason, rec.FailingSince = "", time.Time{}
		case rec.Status == WebhookDisabled && !wasDisabled:
			rec.DisabledReason = "" // disabled by a caller
		}
		rec.ModifiedBy, rec.ModifiedAt = p.ActorID, t.Now
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityWebhook, id), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.TenantID)
		out = rec.API(t.Now)
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, id, OpUpdate, fmt.Sprintf("Webhook %q updated", rec.Name))
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
		if _, err := t.mustWebhook(p.TenantID, id); err != nil {
			return err
		}
		if err := t.Delete(barrier.Tenant(p.TenantID).Record(EntityWebhook, id)); err != nil {
			return err
		}
		t.forgetWebhooks(p.TenantID)
		t.AfterCommit(func() { v.dispatch.Pending().Forget(events.Key{Tenant: p.TenantID, Webhook: id}) })
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, id, OpDelete, "Webhook deleted")
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
		rec, err := t.mustWebhook(p.TenantID, id)
		if err != nil {
			return err
		}
		rec.PreviousSecret, rec.PreviousUntil = rec.Secret, t.Now.Add(t.v.webhooks.SecretOverlap)
		rec.Secret = secret
		rec.ModifiedBy, rec.ModifiedAt = p.ActorID, t.Now
		if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(EntityWebhook, id), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.TenantID)
		out = rec.API(t.Now)
		out.Secret = secret
		return t.Log(p.Actor(), p.TenantID, EntityWebhook, id, OpUpdate, fmt.Sprintf("Webhook %q: signing secret rotated", rec.Name))
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

// mustWebhook reads webhook id of tenant tid: NotFound when there is
// none, as for another tenant's.
func (t *txn) mustWebhook(tid, id string) (*events.Webhook, error) {
	if !unit.ValidID(id) {
		return nil, unit.NotFoundError("webhook")
	}
	var rec events.Webhook
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntityWebhook, id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("webhook")
	}
	return &rec, nil
}

// Webhook statuses (the status field of a webhook).
const (
	WebhookEnabled  = events.Enabled
	WebhookDisabled = events.Disabled
)
