package events

import "github.com/tokenvault/tokenvault/internal/unit"

// Anomaly is the object of access.anomaly: an application crossed its
// reveal budget, or one of its keys read a decoy token.
type Anomaly struct {
	// ApplicationID and ApplicationName name the application whose key
	// (or a session it authorized) read.
	ApplicationID   string `json:"application_id"`
	ApplicationName string `json:"application_name"`
	// SessionID is the session that read, if a session did.
	SessionID string `json:"session_id,omitempty"`
	// Reason is "reveal_budget" (the budget was crossed) or "decoy" (a
	// decoy token was read).
	Reason string `json:"reason"`
	// Tokens, Window and Action are the budget crossed (reason
	// reveal_budget).
	Tokens int    `json:"tokens,omitempty"`
	Window string `json:"window,omitempty"`
	Action string `json:"action,omitempty"`
	// TokenID is the decoy read (reason decoy).
	TokenID string `json:"token_id,omitempty"`
	// Frozen tells whether the application is frozen now.
	Frozen bool `json:"frozen"`
}

// EmitAnomaly emits access.anomaly for a of tenant tid, by the actor whose
// read caused it.
func EmitAnomaly(t *unit.Tx, by unit.Actor, tid string, a Anomaly) error {
	return t.Emit(unit.Event{TenantID: tid, Type: AccessAnomaly, By: by, ObjectName: "anomaly",
		EntityType: unit.EntityApplication, EntityID: a.ApplicationID, View: func() any { return a }})
}
