package tokenvault

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
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
// commit writes the event's outbox entries (webhooks_outbox.go) and the
// object's sequence counter, and reads only that counter: no webhook
// record, no pending index, no application record.

// WebhookEventType is one entry of the event catalogue.
type WebhookEventType struct {
	// Name is the type, as in WebhookEventInfo.Type and a webhook's events.
	Name string `json:"name"`
	// Description says when the event is emitted.
	Description string `json:"description"`
	// HighVolume events (a read of a token, an invocation of a proxy or
	// reactor) are delivered only to webhooks that name them: "*" does
	// not include them.
	HighVolume bool `json:"high_volume,omitempty"`
}

// Event types (WebhookEventInfo.Type).
const (
	EventTokenCreated             = "token.created"
	EventTokenUpdated             = "token.updated"
	EventTokenDeleted             = "token.deleted"
	EventTokenExpired             = "token.expired"
	EventTokenPropertyExpired     = "token.property.expired"
	EventTokenRead                = "token.read"
	EventTokenIntentCreated       = "token-intent.created"
	EventTokenIntentDeleted       = "token-intent.deleted"
	EventTokenIntentConverted     = "token-intent.converted"
	EventApplicationCreated       = "application.created"
	EventApplicationUpdated       = "application.updated"
	EventApplicationDeleted       = "application.deleted"
	EventApplicationKeyCreated    = "application.key.created"
	EventApplicationKeyDeleted    = "application.key.deleted"
	EventProxyCreated             = "proxy.created"
	EventProxyUpdated             = "proxy.updated"
	EventProxyDeleted             = "proxy.deleted"
	EventProxyInvoked             = "proxy.invoked"
	EventReactorCreated           = "reactor.created"
	EventReactorUpdated           = "reactor.updated"
	EventReactorDeleted           = "reactor.deleted"
	EventReactorInvoked           = "reactor.invoked"
	EventReactorCompleted         = "reactor.completed"
	EventReactorFailed            = "reactor.failed"
	EventSessionCreated           = "session.created"
	EventSessionAuthorized        = "session.authorized"
	EventTenantMemberCreated      = "tenant.member.created"
	EventTenantMemberDeleted      = "tenant.member.deleted"
	EventTenantInvitationCreated  = "tenant.invitation.created"
	EventTenantInvitationResent   = "tenant.invitation.resent"
	EventTenantInvitationAccepted = "tenant.invitation.accepted"
	EventTenantInvitationDeleted  = "tenant.invitation.deleted"
	EventWebhookTest              = "webhook.test"
)

// webhookEventTypes is the catalogue, in the order GET
// /webhooks/event-types lists it.
var webhookEventTypes = []WebhookEventType{
	{EventTokenCreated, "A token was created (not a deduplicated create, which returns an existing token).", false},
	{EventTokenUpdated, "A token's data, metadata, containers, search indexes or expiry changed.", false},
	{EventTokenDeleted, "A token was deleted by a caller.", false},
	{EventTokenExpired, "A token passed its expires_at and the sweeper removed it.", false},
	{EventTokenPropertyExpired, "The sweeper removed a card token's cvc (its retention passed).", false},
	{EventTokenRead, "A token's data was returned to a caller, in clear or masked.", true},
	{EventTokenIntentCreated, "A token intent was created.", false},
	{EventTokenIntentDeleted, "A token intent was deleted, or expired unconverted.", false},
	{EventTokenIntentConverted, "A token intent was converted into a token.", false},
	{EventApplicationCreated, "An application was created.", false},
	{EventApplicationUpdated, "An application's name, permissions, rules or expiry changed.", false},
	{EventApplicationDeleted, "An application was deleted.", false},
	{EventApplicationKeyCreated, "An application's key was regenerated: the new key.", false},
	{EventApplicationKeyDeleted, "An application's key was regenerated: the old key, which no longer works.", false},
	{EventProxyCreated, "A proxy was created.", false},
	{EventProxyUpdated, "A proxy was changed.", false},
	{EventProxyDeleted, "A proxy was deleted.", false},
	{EventProxyInvoked, "A proxy forwarded a request.", true},
	{EventReactorCreated, "A reactor was created.", false},
	{EventReactorUpdated, "A reactor was changed.", false},
	{EventReactorDeleted, "A reactor was deleted.", false},
	{EventReactorInvoked, "A reactor was invoked.", true},
	{EventReactorCompleted, "An asynchronous reactor invocation succeeded.", false},
	{EventReactorFailed, "An asynchronous reactor invocation failed.", false},
	{EventSessionCreated, "A session was created.", false},
	{EventSessionAuthorized, "A session was authorized.", false},
	{EventTenantMemberCreated, "A member joined the tenant.", false},
	{EventTenantMemberDeleted, "A member was removed from the tenant.", false},
	{EventTenantInvitationCreated, "An invitation was sent.", false},
	{EventTenantInvitationResent, "An invitation was sent again.", false},
	{EventTenantInvitationAccepted, "An invitation was accepted.", false},
	{EventTenantInvitationDeleted, "An invitation was deleted, or expired.", false},
	{EventWebhookTest, "Sent to one webhook by POST /webhooks/{id}/test.", false},
}

// WebhookEventTypes returns the event catalogue. It needs no key: the
// catalogue is the same for everyone.
func WebhookEventTypes() []WebhookEventType { return slices.Clone(webhookEventTypes) }

// eventTypes indexes the catalogue by name, for eventType.
var eventTypes = func() map[string]WebhookEventType {
	m := make(map[string]WebhookEventType, len(webhookEventTypes))
	for _, e := range webhookEventTypes {
		m[e.Name] = e
	}
	return m
}()

// eventType looks a name up in the catalogue.
func eventType(name string) (WebhookEventType, bool) {
	e, ok := eventTypes[name]
	return e, ok
}

// WebhookEvent is the JSON body POSTed to a webhook: the envelope of the
// Standard Webhooks convention this service follows (docs/webhooks.md).
// It never holds token data, keys, secrets or detokenized values.
type WebhookEvent struct {
	Event WebhookEventInfo `json:"event"`
	// DeliveredAt is when this attempt was sent: it differs between
	// retries of one event, whose Event is the same.
	DeliveredAt time.Time `json:"delivered_at"`
}

// WebhookEventInfo is one event.
type WebhookEventInfo struct {
	// ID is the event's id, the webhook-id header: the same in every
	// attempt and to every webhook, so receivers can drop duplicates.
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	TenantID  string    `json:"tenant_id"`
	// TraceID is the request id of the call that made the change, when
	// it came over HTTP.
	TraceID string `json:"trace_id,omitempty"`
	// Sequence orders the events of one object: it grows with every event
	// about it, in commit order (docs/webhooks-events.md, "Order").
	// High-volume events, which change nothing, and the end of an
	// asynchronous reactor invocation carry none.
	Sequence int64 `json:"sequence,omitempty"`
	// Data is {"<object>": {...}, "actor": {"id", "type", "name"}}: the
	// object's name is token, token_intent, application, proxy, reactor,
	// invocation, session, member, invitation or webhook.
	// docs/webhooks-events.md lists, per event type, the object and its
	// fields; none holds token data, a key, a nonce, a secret or a
	// detokenized value.
	Data json.RawMessage `json:"data"`
}

// WebhookActor is who made the change an event tells of.
type WebhookActor struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// maxEventBytes bounds an event's JSON (the Standard Webhooks advice is
// under 20 kB); emit refuses a bigger one as an internal error, so the
// object views must keep within it (they hold no free-form data larger
// than the Vault's own limits allow).
const maxEventBytes = 20 << 10

// outgoingEvent is an event emit built, for the outbox.
type outgoingEvent struct {
	ID   string
	Type string
	// JSON is the WebhookEventInfo, encoded once.
	JSON []byte
}

// emit queues an event of type typ about an object (the JSON view that
// view builds, named objectName, of the entity entityType/entityID) made
// by by, for every enabled webhook of tenant tid subscribed to typ, in
// t's transaction. It writes nothing, and builds no view, when none is.
func (t *txn) emit(tid, typ string, by actor, objectName, entityType, entityID string, view func() any) error {
	et, ok := eventType(typ)
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
	if len(b) > maxEventBytes {
		return fmt.Errorf("tokenvault: event %s is %d bytes, over %d", typ, len(b), maxEventBytes)
	}
	ev := outgoingEvent{ID: info.ID, Type: typ, JSON: b}
	if err := t.queueWebhookEvent(tid, ev, targets); err != nil {
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
func (t *txn) webhookTargets(tid string, et WebhookEventType) ([]*webhookRecord, error) {
	hooks, err := t.subscriptions(tid)
	if err != nil {
		return nil, err
	}
	var out []*webhookRecord
	for _, h := range hooks {
		if h.Status == WebhookEnabled && subscribes(h.Events, et) {
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
// (endsObject) removes the counter.
func (t *txn) nextEventSequence(tid, typ, entityType, entityID string) (int64, error) {
	k := barrier.Tenant(tid).EventSequence(entityType, entityID)
	var last countRecord
	if _, err := t.GetRecord(k, &last); err != nil {
		return 0, err
	}
	next := max(last.N+1, t.Now.UnixMicro())
	if endsObject(typ) {
		return next, t.Delete(k)
	}
	return next, t.PutRecord(k, &countRecord{N: next})
}
