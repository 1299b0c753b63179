package export

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The events of an export (internal/events' catalogue names each).
const (
	Completed = "export.completed"
	Failed    = "export.failed"
)

// EmitCompleted emits export.completed about m, by by, in t: the signed
// manifest, which holds no data.
func EmitCompleted(t *unit.Tx, by unit.Actor, m *Manifest) error {
	v := *m
	return t.Emit(unit.Event{TenantID: m.TenantID, Type: Completed, By: by, ObjectName: "export",
		EntityType: unit.EntityExport, EntityID: m.ID, View: func() any { return &v }})
}

// FailedView is what export.failed tells of an export that failed after
// it began: which, to whom, when, and how many tokens were written.
type FailedView struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	Filter    Filter    `json:"filter"`
	Recipient string    `json:"recipient"`
	Written   int64     `json:"written"`
	StartedAt time.Time `json:"started_at"`
}

// EmitFailed emits export.failed about m, of which written tokens were
// written, by by, in t.
func EmitFailed(t *unit.Tx, by unit.Actor, m *Manifest, written int64) error {
	v := FailedView{ID: m.ID, TenantID: m.TenantID, Filter: m.Filter, Recipient: m.Recipient, Written: written, StartedAt: m.StartedAt}
	return t.Emit(unit.Event{TenantID: m.TenantID, Type: Failed, By: by, ObjectName: "export",
		EntityType: unit.EntityExport, EntityID: m.ID, View: func() any { return v }})
}
