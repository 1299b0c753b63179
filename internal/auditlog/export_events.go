package auditlog

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ExportState is what the audit exporter does with one queue entry.
type ExportState int

const (
	// ExportSend: deliver the event, then remove the entry.
	ExportSend ExportState = iota
	// ExportDrop: remove the entry, deliver nothing (its line went with
	// its tenant).
	ExportDrop
	// ExportWait: keep the entry for a later pass (its line is not
	// chained yet).
	ExportWait
)

// ExportEvent reads, in t, what the export queue entry <nanos>/<tid>/<id>
// names: a log line, or, for an id "checkpoint-<16 hex seq>", a
// checkpoint of the tenant's chain. tenantGone is the error a read of a
// deleted tenant's records returns: its entries are dropped.
func ExportEvent(t *unit.Tx, rest string, tenantGone error) (auditchain.Event, ExportState, error) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return auditchain.Event{}, ExportDrop, nil
	}
	tid, id := parts[1], parts[2]
	if seq, ok := strings.CutPrefix(id, "checkpoint-"); ok {
		return exportCheckpoint(t, tid, seq, tenantGone)
	}
	suffix := parts[0] + "/" + id
	var rec LineRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
	if errors.Is(err, tenantGone) || (err == nil && !ok) {
		return auditchain.Event{}, ExportDrop, nil // deleted with its tenant
	}
	if err == nil {
		err = WithLink(t, tid, suffix, &rec)
	}
	if err != nil {
		return auditchain.Event{}, 0, err
	}
	if rec.Link == nil {
		// Not chained: either written before the chain began (it never
		// will be), or appended and not chained yet, which its chain
		// queue entry tells.
		queued, err := t.Has(barrier.Tenant(tid).ChainQueueEntry(suffix))
		if err != nil {
			return auditchain.Event{}, 0, err
		}
		if queued {
			return auditchain.Event{}, ExportWait, nil
		}
	}
	return LineEvent(tid, id, &rec), ExportSend, nil
}

// exportCheckpoint reads tenant tid's checkpoint at seq (16 hex digits,
// the id checkpoint-<seq> of its queue entry): from the tenant's
// checkpoints, or, once the tenant is gone, from the final checkpoint its
// deletion kept at sys/chain-final/<tid>. A checkpoint of a deleted
// tenant other than its final one goes with the tenant's lines.
func exportCheckpoint(t *unit.Tx, tid, seqHex string, tenantGone error) (auditchain.Event, ExportState, error) {
	seq, err := strconv.ParseUint(seqHex, 16, 64)
	if err != nil || len(seqHex) != 16 {
		return auditchain.Event{}, ExportDrop, nil
	}
	var rec CheckpointRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Checkpoint(seq), &rec)
	if errors.Is(err, tenantGone) || (err == nil && !ok) {
		ok, err = t.GetRecord(barrier.FinalCheckpoint(tid), &rec)
		if err == nil && (!ok || rec.Seq != seq) {
			return auditchain.Event{}, ExportDrop, nil
		}
	}
	if err != nil {
		return auditchain.Event{}, 0, err
	}
	return CheckpointEvent(rec.Checkpoint()), ExportSend, nil
}

// LineEvent is the exported form of tenant tid's line rec with id id.
func LineEvent(tid, id string, rec *LineRecord) auditchain.Event {
	e := auditchain.Entry{Line: ChainedLine(tid, id, rec)}
	if l := rec.Link; l != nil {
		e.Seq, e.Prev, e.Hash = l.Seq, l.Prev, l.Hash
	}
	return auditchain.LineEvent(e)
}

// CheckpointEvent is the exported form of checkpoint c.
func CheckpointEvent(c auditchain.Checkpoint) auditchain.Event {
	id := "checkpoint-" + c.TenantID + "-" + barrier.SeqKey(c.Seq)
	if c.Final {
		id += "-final"
	}
	return auditchain.Event{Schema: auditchain.CheckpointSchema, ID: id, TenantID: c.TenantID, CreatedAt: c.CreatedAt.UTC(), Checkpoint: &c}
}
