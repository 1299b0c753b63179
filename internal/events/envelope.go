package events

import (
	"encoding/json"
	"time"
)

// Event is the JSON body POSTed to a webhook (the root's WebhookEvent): the envelope of the
// Standard Webhooks convention this service follows (docs/webhooks.md).
// It never holds token data, keys, secrets or detokenized values.
type Event struct {
	Event Info `json:"event"`
	// DeliveredAt is when this attempt was sent: it differs between
	// retries of one event, whose Event is the same.
	DeliveredAt time.Time `json:"delivered_at"`
}

// Info is one event (the root's WebhookEventInfo).
type Info struct {
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

// Actor is who made the change an event tells of (the root's
// WebhookActor).
type Actor struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// MaxEventBytes bounds an event's JSON (the Standard Webhooks advice is
// under 20 kB); the Vault's emit refuses a bigger one as an internal error, so the
// object views must keep within it (they hold no free-form data larger
// than the Vault's own limits allow).
const MaxEventBytes = 20 << 10

// Outgoing is an event the Vault built, for the outbox.
type Outgoing struct {
	ID   string
	Type string
	// JSON is the Info, encoded once.
	JSON []byte
}

// Body is the Event JSON of an event (its stored Info JSON, as
// emitted) sent at at: the envelope around the stored bytes, verbatim.
func Body(event []byte, at time.Time) []byte {
	b := make([]byte, 0, len(event)+64)
	b = append(b, `{"event":`...)
	b = append(b, event...)
	b = append(b, `,"delivered_at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}
