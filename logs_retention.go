package tokenvault

import (
	"context"
	"errors"
	"strings"

	"github.com/tokenvault/tokenvault/auditchain"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store"
)

// pruneLogs removes the audit log lines older than Options.Retention.Logs
// from every tenant, sweepBatch lines a transaction, and returns how many
// it removed. A line goes with its index entries (in either layout, and a
// line of the legacy layout with its log-type entry too; see logs.go), in
// one transaction, so no index ever names a missing line. The pruning is
// not itself written to the tenants' logs (those lines would be pruned in
// their turn); the sweeper reports the count to the host's logger. Lines
// an audit sink has yet to receive are kept (audit_export.go).
//
// A tenant's chained lines go as a prefix of its chain
// (pruneTenantChain), so that what is left still verifies from a signed
// checkpoint; its lines older than the chain go as they always did
// (pruneTenantPreChain).
func (v *Vault) pruneLogs(ctx context.Context) (int, error) {
	if err := v.dropLegacyLogIndex(ctx); err != nil {
		return 0, err
	}
	if v.logRetention <= 0 {
		return 0, nil
	}
	var tenants []string
	err := v.view(ctx, func(t *txn) error {
		tenants = tenants[:0]
		return t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			tenants = append(tenants, tid)
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, tid := range tenants {
		for _, prune := range []func(context.Context, string) (int, bool, error){v.pruneTenantChain, v.pruneTenantPreChain} {
			for {
				n, more, err := prune(ctx, tid)
				total += n
				if err != nil {
					return total, err
				}
				if !more {
					break
				}
			}
		}
	}
	return total, nil
}

// pruneTenantChain removes, in one transaction, up to sweepBatch lines
// from the start of tenant tid's chain, in sequence order, up to the first
// line younger than the retention or that an audit sink has yet to
// receive: so what is left of the chain is whole, from the head's new
// FirstSeq on. In the same transaction it signs a checkpoint at
// FirstSeq-1 (the anchor: its hash is the prev of the first line left; a
// checkpoint there already is kept) and removes the checkpoints below it,
// but for those an audit sink has yet to receive. Interrupted between two
// transactions, the chain is left as whole as after each.
//
// A line the sequence index names that is missing, or whose link is not
// at its seq, stops the pruning there: it is left for a verifier to
// report, not hidden by retention.
func (v *Vault) pruneTenantChain(ctx context.Context, tid string) (removed int, more bool, err error) {
	if err := v.linkNow(ctx); err != nil {
		return 0, false, err
	}
	err = v.update(ctx, func(t *txn) error {
		removed, more = 0, false
		var last auditlog.Link
		var h auditlog.Head
		ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
		if errors.Is(err, errTenantGone) || (err == nil && !ok) {
			return nil // being deleted, or no chain yet
		}
		if err != nil {
			return err
		}
		cutoff := barrier.TimeKey(t.Now.Add(-v.logRetention))
		var seqs []string
		err = t.Scan(barrier.Tenant(tid).ChainSeqs(), "", sweepBatch+1, func(_ barrier.Key, rest string) error {
			seqs = append(seqs, rest)
			return nil
		})
		if err != nil {
			return err
		}
		for i, rest := range seqs {
			if i == sweepBatch {
				more = true
				break
			}
			seqKey, suffix, _ := strings.Cut(rest, "/")
			if suffix >= cutoff {
				break
			}
			if waiting, err := t.exportPending(tid, suffix); err != nil || waiting {
				if err != nil {
					return err
				}
				break
			}
			var l auditlog.LineRecord
			ok, err := t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &l)
			if err == nil && ok {
				err = auditlog.WithLink(t.Tx, tid, suffix, &l)
			}
			if err != nil {
				return err
			}
			if !ok || l.Link == nil || barrier.SeqKey(l.Link.Seq) != seqKey || l.Link.Seq != h.FirstSeq+uint64(removed) {
				break
			}
			if err := t.deleteLine(tid, suffix, &l); err != nil {
				return err
			}
			if err := t.Delete(barrier.Tenant(tid).ChainSeq(l.Link.Seq, suffix)); err != nil {
				return err
			}
			last = *l.Link
			removed++
			t.sweptOne(SweptLogs)
		}
		if removed == 0 {
			more = false
			return nil
		}
		h.FirstSeq = last.Seq + 1
		if err := t.anchorChain(tid, &h, last.Seq, last.Hash); err != nil {
			return err
		}
		return t.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
	})
	return removed, more, err
}

// anchorChain signs, for tenant tid's chain pruned up to seq (head h,
// whose FirstSeq is seq+1), the checkpoint at seq, whose hash is the
// pruned line's, unless there is one; and removes the checkpoints below
// it that no audit sink waits for. A verifier then starts the chain left
// from a signed hash. The head records the anchor as its last checkpoint
// only when no later one was signed.
func (t *txn) anchorChain(tid string, h *auditlog.Head, seq uint64, hash auditchain.Hash) error {
	ok, err := t.Has(barrier.Tenant(tid).Checkpoint(seq))
	if err != nil {
		return err
	}
	if !ok {
		// Checkpointer.Sign signs the head it is given: here one at the
		// anchor, already signed (no unsigned mark of it to remove) and
		// of no key yet (no rotation line to chain after it), so that
		// only the checkpoint is written and queued for export.
		anchor := auditlog.Head{Seq: seq, Hash: hash, FirstSeq: h.FirstSeq, Since: h.Since, SignedSeq: seq}
		c, err := t.v.checkpoints.Sign(t.Tx, tid, &anchor, false)
		if err != nil {
			return err
		}
		if seq > h.SignedSeq {
			h.SignedSeq, h.SignedAt, h.KeyID = seq, c.CreatedAt, c.KeyID
		}
	}
	var below []auditlog.CheckpointRecord
	err = t.Scan(barrier.Tenant(tid).Checkpoints(), "", 0, func(k barrier.Key, rest string) error {
		if rest >= barrier.SeqKey(seq) {
			return store.ErrStop
		}
		var c auditlog.CheckpointRecord
		if _, err := t.GetRecord(k, &c); err != nil {
			return err
		}
		below = append(below, c)
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range below {
		waiting, err := t.exportPending(tid, barrier.TimeKey(c.CreatedAt)+"/checkpoint-"+barrier.SeqKey(c.Seq))
		if err != nil {
			return err
		}
		if !waiting {
			if err := t.Delete(barrier.Tenant(tid).Checkpoint(c.Seq)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pruneTenantPreChain removes up to sweepBatch of tenant tid's lines that
// are older than the retention and than its chain (written before chains
// were, without a link), oldest first, in one transaction. A chained line
// among them is left to pruneTenantChain.
func (v *Vault) pruneTenantPreChain(ctx context.Context, tid string) (removed int, more bool, err error) {
	if err := v.linkNow(ctx); err != nil {
		return 0, false, err
	}
	err = v.update(ctx, func(t *txn) error {
		removed, more = 0, false
		prefix := barrier.Tenant(tid).Logs()
		// Lines are keyed log/<nanos>/<id>: everything before the cutoff's
		// nanos is due, if the chain began after it.
		cutoff := barrier.TimeKey(t.Now.Add(-v.logRetention))
		var h auditlog.Head
		ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
		if errors.Is(err, errTenantGone) {
			return nil // being deleted: its logs go with it
		}
		if err != nil {
			return err
		}
		if ok {
			cutoff = min(cutoff, barrier.TimeKey(h.Since))
		}
		var due []string
		err = t.Scan(prefix, "", sweepBatch+1, func(_ barrier.Key, suffix string) error {
			if suffix >= cutoff {
				return store.ErrStop
			}
			due = append(due, suffix)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > sweepBatch {
			due, more = due[:sweepBatch], true
		}
		for _, suffix := range due {
			// A line an audit sink has yet to receive is kept, and so
			// are the later ones: the sink's queue is in time order.
			if waiting, err := t.exportPending(tid, suffix); err != nil || waiting {
				more = false
				return err
			}
			var l auditlog.LineRecord
			ok, err := t.GetRecord(prefix.Key(suffix), &l)
			if err == nil && ok {
				err = auditlog.WithLink(t.Tx, tid, suffix, &l)
			}
			if err != nil {
				return err
			}
			if !ok || l.Link != nil {
				continue
			}
			// A line waiting for the linker is on its way to the chain,
			// not before it: left to pruneTenantChain once linked.
			if queued, err := t.Has(barrier.Tenant(tid).ChainQueueEntry(suffix)); err != nil || queued {
				if err != nil {
					return err
				}
				continue
			}
			if err := t.deleteLine(tid, suffix, &l); err != nil {
				return err
			}
			removed++
			t.sweptOne(SweptLogs)
		}
		// A batch of chained lines only is the end of what this pass may
		// remove.
		more = more && removed > 0
		return nil
	})
	return removed, more, err
}

// deleteLine removes tenant tid's line l, stored at log/<suffix>, with its
// index entry in whichever layout (logs.go).
func (t *txn) deleteLine(tid, suffix string, l *auditlog.LineRecord) error {
	keys := []barrier.Key{barrier.Tenant(tid).Logs().Key(suffix), barrier.Tenant(tid).ChainLink(suffix), auditlog.IndexKey(tid, l.EntityType, l.EntityID, suffix),
		barrier.Tenant(tid).LogEntityIndex(l.EntityType, l.EntityID).Key(suffix), barrier.Tenant(tid).LogTypeIndex(l.EntityType).Key(suffix)}
	for _, k := range keys {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// dropLegacyLogIndex removes the log-type index entries audit lines had
// before format version 1 (see logs.go), sweepBatch entries a transaction.
// Nothing reads them any more; this only gives their space back. A store
// without any costs one read transaction.
func (v *Vault) dropLegacyLogIndex(ctx context.Context) error {
	var tenants []string
	err := v.view(ctx, func(t *txn) error {
		tenants = tenants[:0]
		var all []string
		err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			all = append(all, tid)
			return nil
		})
		if err != nil {
			return err
		}
		for _, tid := range all {
			err := t.Scan(barrier.Tenant(tid).LogTypeIndexes(), "", 1, func(barrier.Key, string) error {
				tenants = append(tenants, tid)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, tid := range tenants {
		for more := true; more; {
			err := v.update(ctx, func(t *txn) error {
				var keys []barrier.Key
				err := t.Scan(barrier.Tenant(tid).LogTypeIndexes(), "", sweepBatch+1, func(k barrier.Key, _ string) error {
					keys = append(keys, k)
					return nil
				})
				if err != nil {
					return err
				}
				more = len(keys) > sweepBatch
				for _, k := range keys[:min(len(keys), sweepBatch)] {
					if err := t.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
