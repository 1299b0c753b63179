package tokenvault

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// exportState is what the exporter does with one queue entry.
type exportState int

const (
	// exportSend: deliver the event, then remove the entry.
	exportSend exportState = iota
	// exportDrop: remove the entry, deliver nothing (its line went with
	// its tenant).
	exportDrop
	// exportWait: keep the entry for a later pass (its line is not
	// chained yet).
	exportWait
)

// exportEvent reads what the export queue entry <nanos>/<tid>/<id>
// names: a log line, or, for an id "checkpoint-<16 hex seq>", a
// checkpoint of the tenant's chain.
func (t *txn) exportEvent(rest string) (AuditEvent, exportState, error) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return AuditEvent{}, exportDrop, nil
	}
	tid, id := parts[1], parts[2]
	if seq, ok := strings.CutPrefix(id, "checkpoint-"); ok {
		return t.exportCheckpoint(tid, seq)
	}
	suffix := parts[0] + "/" + id
	var rec auditlog.LineRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
	if errors.Is(err, errTenantGone) || (err == nil && !ok) {
		return AuditEvent{}, exportDrop, nil // deleted with its tenant
	}
	if err == nil {
		err = auditlog.WithLink(t.Tx, tid, suffix, &rec)
	}
	if err != nil {
		return AuditEvent{}, 0, err
	}
	if rec.Link == nil {
		// Not chained: either written before the chain began (it never
		// will be), or appended and not chained yet, which its chain
		// queue entry tells.
		queued, err := t.Has(barrier.Tenant(tid).ChainQueueEntry(suffix))
		if err != nil {
			return AuditEvent{}, 0, err
		}
		if queued {
			return AuditEvent{}, exportWait, nil
		}
	}
	return auditEventOf(tid, id, &rec), exportSend, nil
}

// exportCheckpoint reads tenant tid's checkpoint at seq (16 hex digits,
// the id checkpoint-<seq> of its queue entry): from the tenant's
// checkpoints, or, once the tenant is gone, from the final checkpoint its
// deletion kept at sys/chain-final/<tid>. A checkpoint of a deleted
// tenant other than its final one goes with the tenant's lines.
func (t *txn) exportCheckpoint(tid, seqHex string) (AuditEvent, exportState, error) {
	seq, err := strconv.ParseUint(seqHex, 16, 64)
	if err != nil || len(seqHex) != 16 {
		return AuditEvent{}, exportDrop, nil
	}
	var rec auditlog.CheckpointRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Checkpoint(seq), &rec)
	if errors.Is(err, errTenantGone) || (err == nil && !ok) {
		ok, err = t.GetRecord(barrier.FinalCheckpoint(tid), &rec)
		if err == nil && (!ok || rec.Seq != seq) {
			return AuditEvent{}, exportDrop, nil
		}
	}
	if err != nil {
		return AuditEvent{}, 0, err
	}
	return checkpointEventOf(rec.Checkpoint()), exportSend, nil
}
