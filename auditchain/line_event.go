package auditchain

// A line is defined once, as Line: the vault stores it (with its link),
// hashes it into the chain (LineHash), exports it (LineEvent) and reads it
// back from an export (Event.Line). These two functions are the only place
// the export's fields are matched to the line's.

// LineEvent is the exported event of line l: chained (Schema LineSchema
// with Seq, PrevHash and Hash) when e.Seq is not zero, and without a link
// otherwise (a line written before its tenant's chain began, or not
// linked yet). l is e.Line; its CreatedAt is exported in UTC.
func LineEvent(e Entry) Event {
	l := e.Line
	ev := Event{Schema: LineSchema, ID: l.ID, TenantID: l.TenantID, CreatedAt: l.CreatedAt.UTC(),
		ActorID: l.ActorID, ActorType: l.ActorType, EntityType: l.EntityType, EntityID: l.EntityID,
		Operation: l.Operation, Message: l.Message,
		Transform: l.Transform, Channel: l.Channel, Application: l.Application, Purpose: l.Purpose}
	if e.Seq != 0 {
		prev, hash := e.Prev, e.Hash
		ev.Seq, ev.PrevHash, ev.Hash = e.Seq, &prev, &hash
	}
	return ev
}

// Line is the line a line event carries (the chain's link aside).
func (e *Event) Line() Line {
	return Line{
		TenantID: e.TenantID, ID: e.ID, CreatedAt: e.CreatedAt,
		ActorID: e.ActorID, ActorType: e.ActorType, EntityType: e.EntityType, EntityID: e.EntityID,
		Operation: e.Operation, Message: e.Message,
		Transform: e.Transform, Channel: e.Channel, Application: e.Application, Purpose: e.Purpose,
	}
}
