package events

import (
	"strings"
	"time"
)

// DeliveryInfo is one event's delivery to one webhook as the API shows
// it (the root's WebhookDelivery): its state and
// its last attempt. It never holds the event's body nor more than a short
// prefix of the receiver's answer.
type DeliveryInfo struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	// EventID is the webhook-id header of every attempt.
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Status is pending (to be attempted, or being attempted), succeeded
	// (a 2xx answer) or failed (given up, or the webhook was disabled).
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts"`
	CreatedAt time.Time `json:"created_at"`
	// LastAttemptAt, ResponseStatus (0: no answer), DurationMS, Response
	// (the first bytes of the answer's body, at most 256) and Error tell
	// of the last attempt.
	LastAttemptAt  *time.Time `json:"last_attempt_at,omitempty"`
	ResponseStatus int        `json:"response_status,omitempty"`
	DurationMS     int64      `json:"duration_ms"`
	Response       string     `json:"response,omitempty"`
	Error          string     `json:"error,omitempty"`
	// NextAttemptAt is when a pending delivery is next attempted.
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
}

// API is the delivery as the API shows it: never the event's body.
func (r *Delivery) API() DeliveryInfo {
	d := DeliveryInfo{ID: r.ID, WebhookID: r.WebhookID, EventID: r.EventID, EventType: r.EventType, Status: r.Status,
		Attempts: r.Attempts, CreatedAt: r.CreatedAt, ResponseStatus: r.ResponseStatus, DurationMS: r.Duration.Milliseconds(),
		Response: strings.ToValidUTF8(string(r.Response), "\uFFFD"), Error: r.Error}
	if !r.LastAttemptAt.IsZero() {
		at := r.LastAttemptAt
		d.LastAttemptAt = &at
	}
	if r.Status == DeliveryPending {
		at := r.NextAttemptAt
		d.NextAttemptAt = &at
	}
	return d
}
