package unit

import "github.com/tokenvault/tokenvault/auditchain"

// Audit lines. A feature records what it did by appending a line to its
// tenant's trail in the same unit of work (Tx.Log), so the line lands
// exactly when the change does. How a line is stored, chained, indexed
// and exported is the audit log's business: it registers itself as the
// Work's LineWriter while the Vault opens, and no feature names it.

// LineWriter writes audit lines in a unit of work (the audit log).
type LineWriter interface {
	// WriteLine appends l, dated t.Now, to tenant tid's trail in t.
	WriteLine(t *Tx, tid string, l auditchain.Line) error
}

// WriteLinesWith has every unit of work write its audit lines with lw.
// Call it while the Vault opens, before any unit of work runs.
func (w *Work) WriteLinesWith(lw LineWriter) { w.lines = lw }

// Log appends a line to tenant tid's trail, in t: by did op to the entity
// entityType/entityID, as msg says.
func (t *Tx) Log(by Actor, tid, entityType, entityID, op, msg string) error {
	return t.LogLine(tid, auditchain.Line{
		ActorID:    by.ID,
		ActorType:  by.Type,
		EntityType: entityType,
		EntityID:   entityID,
		Operation:  op,
		Message:    msg,
	})
}

// LogLine appends l to tenant tid's trail, in t (see Log).
func (t *Tx) LogLine(tid string, l auditchain.Line) error {
	return t.work.lines.WriteLine(t, tid, l)
}
