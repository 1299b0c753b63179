package intents

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// emit emits typ (events.TokenIntent*) about the intent rec; tokenID is
// the token a converted intent became.
func emit(t *unit.Tx, typ string, by unit.Actor, rec *Record, tokenID string) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "token_intent", EntityType: unit.EntityTokenIntent, EntityID: rec.ID, View: func() any { return eventView(rec, tokenID) }})
}

// event is a token intent as its events show it: its data is never
// shown, not even summarised.
type event struct {
	ID          string    `json:"id"`
	TenantID    string    `json:"tenant_id"`
	Type        string    `json:"type"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	CreatedBy   string    `json:"created_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// TokenID is the token a token-intent.converted intent became.
	TokenID string `json:"token_id,omitempty"`
}

func eventView(rec *Record, tokenID string) *event {
	return &event{ID: rec.ID, TenantID: rec.TenantID, Type: rec.Type, Fingerprint: rec.Fingerprint,
		CreatedBy: rec.CreatedBy, CreatedAt: rec.CreatedAt, ExpiresAt: rec.ExpiresAt, TokenID: tokenID}
}
