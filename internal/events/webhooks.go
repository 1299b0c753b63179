package events

import (
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Webhook subscriptions: a tenant's URLs that receive the events of the
// catalogue they subscribe to, signed with a secret of their own
// (docs/webhooks.md). The Vault's methods authorize the caller
// (webhook:create|read|update|delete) and call these in their unit of
// work; each change is an audit line of entity type EntityWebhook, and
// forgets the tenant's cached subscriptions (Forget).

// Get reads webhook id of tenant tid: NotFound when there is none, as
// for another tenant's.
func Get(t *unit.Tx, tid, id string) (*Webhook, error) {
	if !unit.ValidID(id) {
		return nil, unit.NotFoundError("webhook")
	}
	var rec Webhook
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityWebhook, id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("webhook")
	}
	return &rec, nil
}

// Create stores a new webhook of p's tenant from req, signed with secret
// (made before the unit of work, so that a retry keeps it), and returns
// it as the API shows it, its secret included. It returns Invalid for a
// request that fails its checks (Check) and Conflict when the tenant has
// Options.MaxPerTenant webhooks already.
func (s *Service) Create(t *unit.Tx, p *access.Principal, req Request, secret string) (*Subscription, error) {
	if err := s.Check(&req); err != nil {
		return nil, err
	}
	if err := s.checkRoom(t, p.TenantID); err != nil {
		return nil, err
	}
	rec := &Webhook{ID: s.IDs.Next(t.Now), TenantID: p.TenantID, Secret: secret,
		CreatedBy: p.ActorID, CreatedAt: t.Now}
	req.Apply(rec)
	if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(unit.EntityWebhook, rec.ID), rec); err != nil {
		return nil, err
	}
	Forget(t, p.TenantID)
	out := rec.API(t.Now)
	out.Secret = secret
	return out, t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, rec.ID, unit.OpCreate, fmt.Sprintf("Webhook %q created", rec.Name))
}

// checkRoom refuses a webhook more when tenant tid has MaxPerTenant
// already, counted in the creating unit of work.
func (s *Service) checkRoom(t *unit.Tx, tid string) error {
	limit := s.Dispatch.Options().MaxPerTenant
	n := 0
	err := t.Scan(barrier.Tenant(tid).Records(unit.EntityWebhook), "", limit, func(barrier.Key, string) error {
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n >= limit {
		return unit.Errorf(unit.Conflict, "the tenant has %d webhooks, the most it may have; delete one first", limit)
	}
	return nil
}

// List returns the webhooks of tenant tid as the API shows them (no
// secret), oldest first.
func List(t *unit.Tx, tid string) ([]Subscription, error) {
	recs, err := TenantWebhooks(t, tid)
	if err != nil {
		return nil, err
	}
	items := make([]Subscription, len(recs))
	for i, r := range recs {
		items[i] = *r.API(t.Now)
	}
	return items, nil
}

// Replace replaces the name, url, events, status and notify_email of
// webhook id of p's tenant with req's, and returns it as the API shows
// it. Enabling a webhook the Vault disabled clears why and since when it
// failed. It returns NotFound for a webhook that is not the tenant's and
// Invalid for a request that fails its checks.
func (s *Service) Replace(t *unit.Tx, p *access.Principal, id string, req Request) (*Subscription, error) {
	rec, err := Get(t, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if err := s.Check(&req); err != nil {
		return nil, err
	}
	wasDisabled := rec.Status == Disabled
	req.Apply(rec)
	switch {
	case rec.Status == Enabled && wasDisabled:
		rec.DisabledReason, rec.FailingSince = "", time.Time{}
	case rec.Status == Disabled && !wasDisabled:
		rec.DisabledReason = "" // disabled by a caller
	}
	rec.ModifiedBy, rec.ModifiedAt = p.ActorID, t.Now
	if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(unit.EntityWebhook, id), rec); err != nil {
		return nil, err
	}
	Forget(t, p.TenantID)
	return rec.API(t.Now), t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, id, unit.OpUpdate, fmt.Sprintf("Webhook %q updated", rec.Name))
}

// Delete deletes webhook id of p's tenant: it receives no event from
// then on, and its count of pending deliveries goes once t commits. It
// returns NotFound for a webhook that is not the tenant's.
func (s *Service) Delete(t *unit.Tx, p *access.Principal, id string) error {
	if _, err := Get(t, p.TenantID, id); err != nil {
		return err
	}
	if err := t.Delete(barrier.Tenant(p.TenantID).Record(unit.EntityWebhook, id)); err != nil {
		return err
	}
	Forget(t, p.TenantID)
	t.AfterCommit(func() { s.Dispatch.Pending().Forget(Key{Tenant: p.TenantID, Webhook: id}) })
	return t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, id, unit.OpDelete, "Webhook deleted")
}

// Rotate gives webhook id of p's tenant the signing secret secret (made
// before the unit of work), keeping the one it replaces as the previous
// one for Options.SecretOverlap, and returns it as the API shows it, its
// new secret included. It returns NotFound for a webhook that is not the
// tenant's.
func (s *Service) Rotate(t *unit.Tx, p *access.Principal, id, secret string) (*Subscription, error) {
	rec, err := Get(t, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	rec.PreviousSecret, rec.PreviousUntil = rec.Secret, t.Now.Add(s.Dispatch.Options().SecretOverlap)
	rec.Secret = secret
	rec.ModifiedBy, rec.ModifiedAt = p.ActorID, t.Now
	if err := t.PutRecord(barrier.Tenant(p.TenantID).Record(unit.EntityWebhook, id), rec); err != nil {
		return nil, err
	}
	Forget(t, p.TenantID)
	out := rec.API(t.Now)
	out.Secret = secret
	return out, t.Log(p.Actor(), p.TenantID, unit.EntityWebhook, id, unit.OpUpdate, fmt.Sprintf("Webhook %q: signing secret rotated", rec.Name))
}
