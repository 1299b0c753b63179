package approvals

import (
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The events of a change (internal/events' catalogue names each).
const (
	Requested = "approval.requested"
	Approved  = "approval.approved"
	// Applied, Rejected, Expired and Failed are the statuses' events:
	// "approval." + the status.
)

// EventType is the event of a change reaching status (applied, rejected,
// expired, failed), or Requested and Approved themselves.
func EventType(s string) string {
	switch s {
	case Requested, Approved:
		return s
	}
	return "approval." + s
}

// emit emits the event of typ (Requested, Approved, or a status) about c,
// as c is now: the view is taken here, since c changes again in the same
// transaction when its approval applies it.
func emit(t *unit.Tx, typ string, by unit.Actor, c *Change) error {
	v := ChangeOf(c, c.Status)
	return t.Emit(unit.Event{TenantID: c.TenantID, Type: EventType(typ), By: by, ObjectName: "approval",
		EntityType: unit.EntityApproval, EntityID: c.ID, View: func() any { return v }})
}

// ApprovalView is one approval as the API shows it.
type ApprovalView struct {
	By     string    `json:"by"`
	ByType string    `json:"by_type"`
	At     time.Time `json:"at"`
}

// ChangeView is a change as the API and its events show it: never its
// payload (which may hold a key).
type ChangeView struct {
	ID              string          `json:"id"`
	TenantID        string          `json:"tenant_id"`
	Operation       string          `json:"operation"`
	Target          string          `json:"target,omitempty"`
	Before          json.RawMessage `json:"before"`
	After           json.RawMessage `json:"after"`
	Status          string          `json:"status"`
	Required        int             `json:"required"`
	Approvals       []ApprovalView  `json:"approvals"`
	RequestedBy     string          `json:"requested_by"`
	RequestedByType string          `json:"requested_by_type"`
	RequestedAt     time.Time       `json:"requested_at"`
	ExpiresAt       time.Time       `json:"expires_at"`
	Reason          string          `json:"reason,omitempty"`
	DecidedBy       string          `json:"decided_by,omitempty"`
	DecidedByType   string          `json:"decided_by_type,omitempty"`
	DecidedAt       *time.Time      `json:"decided_at,omitempty"`
	// UsedAt is when an approved bulk detokenization was used.
	UsedAt *time.Time `json:"used_at,omitempty"`
}

// ChangeOf is c as the API shows it, with status (StatusAt).
func ChangeOf(c *Change, status string) *ChangeView {
	v := &ChangeView{ID: c.ID, TenantID: c.TenantID, Operation: c.Operation, Target: c.Target,
		Before: jsonOrNull(c.Before), After: jsonOrNull(c.After), Status: status, Required: c.Required,
		Approvals: []ApprovalView{}, RequestedBy: c.RequestedBy, RequestedByType: c.RequestedByType,
		RequestedAt: c.RequestedAt, ExpiresAt: c.ExpiresAt, Reason: c.Reason,
		DecidedBy: c.DecidedBy, DecidedByType: c.DecidedByType}
	for _, a := range c.Approvals {
		v.Approvals = append(v.Approvals, ApprovalView(a))
	}
	if c.Status != Pending {
		at := c.DecidedAt
		v.DecidedAt = &at
	}
	if !c.UsedAt.IsZero() {
		at := c.UsedAt
		v.UsedAt = &at
	}
	return v
}

func jsonOrNull(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}
