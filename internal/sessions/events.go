package sessions

import (
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// emit emits typ (events.Session*) about the session rec.
func emit(t *unit.Tx, typ string, by unit.Actor, rec *Record) error {
	return t.Emit(unit.Event{TenantID: rec.TenantID, Type: typ, By: by, ObjectName: "session", EntityType: unit.EntitySession, EntityID: rec.ID, View: func() any { return eventView(rec) }})
}

// event is a session as its events show it: never its key, its nonce, or
// their hashes.
type event struct {
	ID            string     `json:"id"`
	TenantID      string     `json:"tenant_id"`
	ApplicationID string     `json:"application_id"`
	Authorized    bool       `json:"authorized"`
	AuthorizedBy  string     `json:"authorized_by,omitempty"`
	AuthorizedAt  *time.Time `json:"authorized_at,omitempty"`
	// Permissions are those the authorization granted, rules aside.
	Permissions []string  `json:"permissions,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func eventView(r *Record) *event {
	return &event{ID: r.ID, TenantID: r.TenantID, ApplicationID: r.ApplicationID, Authorized: r.Authorized,
		AuthorizedBy: r.AuthorizedBy, AuthorizedAt: r.AuthorizedAt, Permissions: slices.Clone(r.Grants.Permissions),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
}
