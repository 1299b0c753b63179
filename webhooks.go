package tokenvault

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Webhook subscriptions: a tenant's URLs that receive the events of the
// catalogue (webhooks_events.go) they subscribe to, signed with a secret
// of their own (docs/webhooks.md). Their management is for management
// applications (webhook:create|read|update|delete); each change is an
// audit line of entity type EntityWebhook. The delivery of events is the
// dispatcher's (webhooks_dispatch*.go).

// WebhookSubscription is a webhook as the API shows it. It is not the
// asynchronous reactor callback body, which is Webhook.
type WebhookSubscription struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
	// Events are the catalogue names the webhook receives, or "*" for
	// every event that is not high-volume.
	Events []string `json:"events"`
	// Status is WebhookEnabled or WebhookDisabled.
	Status string `json:"status"`
	// NotifyEmail is told when the Vault disables the webhook.
	NotifyEmail string `json:"notify_email,omitempty"`
	// DisabledReason says why the Vault disabled the webhook: "gone" (its
	// receiver answered 410) or "failing" (no success for
	// WebhookOptions.DisableAfter); empty while enabled, or when a caller
	// disabled it.
	DisabledReason string `json:"disabled_reason,omitempty"`
	// Secret signs the deliveries ("whsec_" and the base64 of 32 random
	// bytes). It is in the answers of CreateWebhook and
	// RotateWebhookSecret only: keep it then, no read shows it again.
	Secret string `json:"secret,omitempty"`
	// PreviousSecretUntil, after a rotation, is until when deliveries are
	// signed with the secret before it too (WebhookOptions.SecretOverlap).
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
	CreatedBy           string     `json:"created_by,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	ModifiedBy          string     `json:"modified_by,omitempty"`
	ModifiedAt          *time.Time `json:"modified_at,omitempty"`
}

// WebhookRequest is the body of CreateWebhook and UpdateWebhook. An
// update replaces every field: one left out takes its default.
type WebhookRequest struct {
	// Name: 1 to 200 characters.
	Name string `json:"name"`
	// URL receives the events: absolute, https, without credentials or
	// fragment, naming a public host in ASCII (an international name in
	// its xn-- form; Unicode digits and dots are refused).
	// Options.Outbound.AllowPrivateDestinations allows private hosts, and
	// http to a loopback host only.
	URL string `json:"url"`
	// Events: one or more catalogue names (WebhookEventTypes), or "*",
	// each once.
	Events []string `json:"events"`
	// Status is WebhookEnabled (the default) or WebhookDisabled.
	Status string `json:"status,omitempty"`
	// NotifyEmail, when set, is a bare e-mail address told when the Vault
	// disables the webhook: at a public ASCII domain name (not an address
	// literal, localhost or a special-use name), its local part in one
	// script. Only a member's address is told the webhook's name and URL
	// (WebhookDisabledMail).
	NotifyEmail string `json:"notify_email,omitempty"`
}

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
	secret := newWebhookSecret()
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookCreate)
		if err != nil {
			return err
		}
		if err := v.validateWebhook(&req); err != nil {
			return err
		}
		if err := t.checkWebhookRoom(p.tenantID); err != nil {
			return err
		}
		rec := &webhookRecord{ID: t.v.ids.Next(t.Now), TenantID: p.tenantID, Secret: secret,
			CreatedBy: p.actorID, CreatedAt: t.Now}
		req.apply(rec)
		if err := t.PutRecord(barrier.Tenant(p.tenantID).Record(EntityWebhook, rec.ID), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.tenantID)
		out = rec.api(t.Now)
		out.Secret = secret
		return t.log(p.actor(), p.tenantID, EntityWebhook, rec.ID, OpCreate, fmt.Sprintf("Webhook %q created", rec.Name))
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
		rec, err := t.mustWebhook(p.tenantID, id)
		if err != nil {
			return err
		}
		out = rec.api(t.Now)
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
	pg, err := req.PageRequest.resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[WebhookSubscription]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookRead)
		if err != nil {
			return err
		}
		recs, err := t.tenantWebhooks(p.tenantID)
		if err != nil {
			return err
		}
		items := make([]WebhookSubscription, len(recs))
		for i, r := range recs {
			items[i] = *r.api(t.Now)
		}
		out = paginate(items, pg, func(w WebhookSubscription) string { return w.ID })
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
		rec, err := t.mustWebhook(p.tenantID, id)
		if err != nil {
			return err
		}
		if err := v.validateWebhook(&req); err != nil {
			return err
		}
		wasDisabled := rec.Status == WebhookDisabled
		req.apply(rec)
		switch {
		case rec.Status == WebhookEnabled && wasDisabled:
			rec.DisabledReason, rec.FailingSince = "", time.Time{}
		case rec.Status == WebhookDisabled && !wasDisabled:
			rec.DisabledReason = "" // disabled by a caller
		}
		rec.ModifiedBy, rec.ModifiedAt = p.actorID, t.Now
		if err := t.PutRecord(barrier.Tenant(p.tenantID).Record(EntityWebhook, id), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.tenantID)
		out = rec.api(t.Now)
		return t.log(p.actor(), p.tenantID, EntityWebhook, id, OpUpdate, fmt.Sprintf("Webhook %q updated", rec.Name))
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
		if _, err := t.mustWebhook(p.tenantID, id); err != nil {
			return err
		}
		if err := t.Delete(barrier.Tenant(p.tenantID).Record(EntityWebhook, id)); err != nil {
			return err
		}
		t.forgetWebhooks(p.tenantID)
		t.AfterCommit(func() { v.dispatch.pending.forget(hookKey{p.tenantID, id}) })
		return t.log(p.actor(), p.tenantID, EntityWebhook, id, OpDelete, "Webhook deleted")
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
	secret := newWebhookSecret()
	var out *WebhookSubscription
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermWebhookUpdate)
		if err != nil {
			return err
		}
		rec, err := t.mustWebhook(p.tenantID, id)
		if err != nil {
			return err
		}
		rec.PreviousSecret, rec.PreviousUntil = rec.Secret, t.Now.Add(t.v.webhooks.SecretOverlap)
		rec.Secret = secret
		rec.ModifiedBy, rec.ModifiedAt = p.actorID, t.Now
		if err := t.PutRecord(barrier.Tenant(p.tenantID).Record(EntityWebhook, id), rec); err != nil {
			return err
		}
		t.forgetWebhooks(p.tenantID)
		out = rec.api(t.Now)
		out.Secret = secret
		return t.log(p.actor(), p.tenantID, EntityWebhook, id, OpUpdate, fmt.Sprintf("Webhook %q: signing secret rotated", rec.Name))
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
	out := make([]string, len(webhookEventTypes))
	for i, e := range webhookEventTypes {
		out[i] = e.Name
	}
	return out, nil
}

// mustWebhook reads webhook id of tenant tid: NotFound when there is
// none, as for another tenant's.
func (t *txn) mustWebhook(tid, id string) (*webhookRecord, error) {
	if !unit.ValidID(id) {
		return nil, unit.NotFoundError("webhook")
	}
	var rec webhookRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntityWebhook, id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("webhook")
	}
	return &rec, nil
}

// apply sets the fields req replaces (validateWebhook has checked it).
func (req *WebhookRequest) apply(rec *webhookRecord) {
	rec.Name, rec.URL, rec.Status, rec.NotifyEmail = req.Name, req.URL, req.Status, req.NotifyEmail
	rec.Events = append([]string(nil), req.Events...)
}

// api is the webhook the API shows at now: never its secrets (the
// answers of CreateWebhook and RotateWebhookSecret add the new one).
func (r *webhookRecord) api(now time.Time) *WebhookSubscription {
	w := &WebhookSubscription{ID: r.ID, TenantID: r.TenantID, Name: r.Name, URL: r.URL,
		Events: append([]string{}, r.Events...), Status: r.Status, NotifyEmail: r.NotifyEmail,
		DisabledReason: r.DisabledReason, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy}
	if !r.ModifiedAt.IsZero() {
		at := r.ModifiedAt
		w.ModifiedAt = &at
	}
	if r.PreviousSecret != "" && r.PreviousUntil.After(now) {
		until := r.PreviousUntil
		w.PreviousSecretUntil = &until
	}
	return w
}
