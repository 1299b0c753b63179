package unit

// Events. A feature tells of a change by emitting an event in the unit
// of work that makes it (Tx.Emit), so the event is queued exactly when
// the change lands. Who is subscribed, what an event's envelope holds and
// how it is delivered is the events feature's business: it registers
// itself as the Work's EventWriter while the Vault opens, and no feature
// names it.

// Event is a change to tell of, as a feature emits it.
type Event struct {
	// TenantID is the tenant whose webhooks hear of it.
	TenantID string
	// Type is the event's type, from the events catalogue
	// ("token.created").
	Type string
	// By made the change.
	By Actor
	// ObjectName names the object in the event's data ("token").
	ObjectName string
	// EntityType and EntityID name the entity changed (Entity*), whose
	// events are numbered in sequence.
	EntityType, EntityID string
	// View builds the object's JSON view; it is called only when a
	// webhook is subscribed to the event.
	View func() any
}

// EventWriter queues events in a unit of work (the events feature).
type EventWriter interface {
	// Emit queues e, in t, for every webhook subscribed to it.
	Emit(t *Tx, e Event) error
}

// EmitEventsWith has every unit of work queue its events with ew. Call it
// while the Vault opens, before any unit of work runs.
func (w *Work) EmitEventsWith(ew EventWriter) { w.events = ew }

// Emit queues e in t (see EventWriter).
func (t *Tx) Emit(e Event) error { return t.work.events.Emit(t, e) }
