package tokenvault

import (
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The event catalogue and the outbox's entry point.
//
// A change emits its events in the transaction that makes it (txn.emit,
// beside its audit line): an acknowledged change always has its events
// queued for delivery, a rolled-back one never has. When no enabled
// webhook of the tenant subscribes to the event's type, emit writes
// nothing and reads nothing: the tenant's subscriptions come from the
// Vault's cache (webhooks_subscriptions.go). With subscribers, the
// commit writes the event's outbox entries (internal/events' outbox.go) and the
// object's sequence counter, and reads only that counter: no webhook
// record, no pending index, no application record.

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
	EventWebhookTest              = events.WebhookTest
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

// vaultEvents queues the events of every unit of work (unit.EventWriter).
type vaultEvents struct{ v *Vault }

// Emit queues an event of type e.Type about an object (the JSON view that
// e.View builds, named e.ObjectName, of the entity e.EntityType/EntityID)
// made by e.By, for every enabled webhook of tenant e.TenantID subscribed
// to it, in ut's transaction. It writes nothing, and builds no view, when
// none is.
func (ve vaultEvents) Emit(ut *unit.Tx, e unit.Event) error {
	t := &txn{Tx: ut, v: ve.v}
	tid, typ, by, objectName, entityType, entityID, view := e.TenantID, e.Type, e.By, e.ObjectName, e.EntityType, e.EntityID, e.View
	et, ok := events.Lookup(typ)
	if !ok {
		return fmt.Errorf("tokenvault: event type %q is not in the catalogue", typ)
	}
	targets, err := t.webhookTargets(tid, et)
	if err != nil || len(targets) == 0 {
		return err
	}
	info := WebhookEventInfo{ID: t.v.ids.Next(t.Now), Type: typ, Timestamp: t.Now, TenantID: tid, TraceID: unit.TraceID(t.Ctx)}
	if !et.HighVolume && entityID != "" {
		if info.Sequence, err = t.nextEventSequence(tid, typ, entityType, entityID); err != nil {
			return err
		}
	}
	who, err := t.eventActor(tid, by)
	if err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{objectName: view(), "actor": who})
	if err != nil {
		return fmt.Errorf("tokenvault: event %s: %w", typ, err)
	}
	info.Data = data
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("tokenvault: event %s: %w", typ, err)
	}
	if len(b) > events.MaxEventBytes {
		return fmt.Errorf("tokenvault: event %s is %d bytes, over %d", typ, len(b), events.MaxEventBytes)
	}
	ev := events.Outgoing{ID: info.ID, Type: typ, JSON: b}
	if err := t.v.dispatch.QueueEvent(t.Tx, tid, ev, targets); err != nil {
		return err
	}
	if tap := t.v.eventTap; tap != nil {
		t.AfterCommit(func() { tap(tid, ev, targets) })
	}
	return nil
}

// eventActor is by as events name it: an application by its name too.
// The name comes with by when it was authenticated (the principal
// carries it, read with the application, and the auth cache drops it
// when the application changes), so an event costs no read; only a
// transaction that itself changed an application or key, or an actor
// named without it, reads the application record.
func (t *txn) eventActor(tid string, by actor) (WebhookActor, error) {
	who := WebhookActor{ID: by.ID, Type: by.Type}
	if by.Type != ActorApplication || by.ID == "" {
		return who, nil
	}
	if by.Name != "" && !t.AuthChanged() {
		who.Name = by.Name
		return who, nil
	}
	var app access.ApplicationRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntityApplication, by.ID), &app)
	if err != nil {
		return who, err
	}
	if ok {
		who.Name = app.Name
	}
	return who, nil
}

// webhookTargets returns tenant tid's enabled webhooks subscribed to et:
// by name, or by "*" when et is not high-volume. The tenant's webhooks
// come from the Vault's cache (webhooks_subscriptions.go): a commit reads
// none while they have not changed.
func (t *txn) webhookTargets(tid string, et WebhookEventType) ([]*events.Webhook, error) {
	hooks, err := t.subscriptions(tid)
	if err != nil {
		return nil, err
	}
	var out []*events.Webhook
	for _, h := range hooks {
		if h.Status == WebhookEnabled && events.Subscribes(h.Events, et) {
			out = append(out, h)
		}
	}
	return out, nil
}

// subscribes reports whether a webhook's events include et.
func subscribes(events []string, et WebhookEventType) bool {
	for _, e := range events {
		if e == et.Name || e == "*" && !et.HighVolume {
			return true
		}
	}
	return false
}

// nextEventSequence returns the next sequence number of the events about
// entityType/entityID and keeps it: one more than the last, and at least
// the transaction's time in microseconds, so that numbers keep growing
// when an object of the same id is made again after a deletion removed
// its counter (microseconds keep the numbers within the 2^53 a
// JavaScript receiver reads exactly). An event that ends the object
// (events.EndsObject) removes the counter.
func (t *txn) nextEventSequence(tid, typ, entityType, entityID string) (int64, error) {
	k := barrier.Tenant(tid).EventSequence(entityType, entityID)
	var last countRecord
	if _, err := t.GetRecord(k, &last); err != nil {
		return 0, err
	}
	next := max(last.N+1, t.Now.UnixMicro())
	if events.EndsObject(typ) {
		return next, t.Delete(k)
	}
	return next, t.PutRecord(k, &countRecord{N: next})
}
