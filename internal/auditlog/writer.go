package auditlog

import (
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Writer writes the audit lines of every unit of work (unit.LineWriter):
// the line, its place in the linker's queue, its index entry (or, for a
// read, its pending one) and its export queue entries, all in the
// caller's transaction, so they land exactly when the change does.
type Writer struct {
	// IDs names the lines.
	IDs *unit.IDSource
	// Indexer decides which index entries are written later (Later).
	Indexer *Indexer
	// Exporter queues each line for every export sink.
	Exporter *Exporter
}

// WriteLine appends l, dated t.Now, to tenant tid's trail in t.
func (w *Writer) WriteLine(t *unit.Tx, tid string, line auditchain.Line) error {
	l := LineRecord{Line: line}
	l.CreatedAt = t.Now
	entityType, entityID, op := l.EntityType, l.EntityID, l.Operation
	suffix := barrier.TimeKey(l.CreatedAt) + "/" + w.IDs.Next(t.Now)
	if err := t.PutNew(barrier.Tenant(tid).Logs().Key(suffix), &l); err != nil {
		return err
	}
	// Queued for the linker, which chains it beside the commit (chain.go).
	if err := QueueLine(t, tid, suffix); err != nil {
		return err
	}
	// Its index entry: now, or for a read by the indexer (indexer.go).
	if later, err := w.Indexer.Later(t, tid, entityType, entityID, op, suffix); err != nil {
		return err
	} else if !later {
		// New, as the line is: appended with it.
		if err := t.AppendIndex(IndexKey(tid, entityType, entityID, suffix)); err != nil {
			return err
		}
	}
	// The line's export queue entries land with it (export.go).
	return w.Exporter.Queue(t, tid, suffix)
}
