package auditlog

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// RetentionConfig is what log retention needs of the Vault.
type RetentionConfig struct {
	// Work runs the pruning transactions.
	Work *unit.Work
	// Linker links the queued lines before a tenant is pruned, and
	// Checkpoints signs the anchor of a pruned chain.
	Linker      *Linker
	Checkpoints *Checkpointer
	// Keep is Options.Retention.Logs: lines older are removed; zero keeps
	// them forever (the legacy index entries still go).
	Keep time.Duration
	// Batch bounds the lines (or legacy entries) one transaction removes.
	Batch int
	// TenantGone is the error a read of a deleted tenant's records
	// returns.
	TenantGone error
	// Waiting reports whether an audit sink has yet to receive what is at
	// log/<suffix> of tenant tid (a line, or checkpoint-<seq>).
	Waiting func(t *unit.Tx, tid, suffix string) (bool, error)
	// Removed is told of each line removed, in the transaction that
	// removes it (the sweeper's tallies).
	Removed func(t *unit.Tx)
}

// Retention removes the audit lines older than the retention.
type Retention struct{ cfg RetentionConfig }

// NewRetention is the retention of cfg.
func NewRetention(cfg RetentionConfig) *Retention { return &Retention{cfg: cfg} }

// Prune removes the audit log lines older than the retention (Keep)
// from every tenant, Batch lines a transaction, and returns how many
// it removed. A line goes with its index entries (in either layout, and a
// line of the legacy layout with its log-type entry too; see keys.go), in
// one transaction, so no index ever names a missing line. The pruning is
// not itself written to the tenants' logs (those lines would be pruned in
// their turn); the sweeper reports the count to the host's logger. Lines
// an audit sink has yet to receive are kept (Waiting).
//
// A tenant's chained lines go as a prefix of its chain
// (pruneTenantChain), so that what is left still verifies from a signed
// checkpoint; its lines older than the chain go as they always did
// (pruneTenantPreChain).
func (r *Retention) Prune(ctx context.Context) (int, error) {
	if err := r.dropLegacyLogIndex(ctx); err != nil {
		return 0, err
	}
	if r.cfg.Keep <= 0 {
		return 0, nil
	}
	var tenants []string
	err := r.cfg.Work.View(ctx, func(t *unit.Tx) error {
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
		for _, prune := range []func(context.Context, string) (int, bool, error){r.pruneTenantChain, r.pruneTenantPreChain} {
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

// pruneTenantChain removes, in one transaction, up to Batch lines
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
func (r *Retention) pruneTenantChain(ctx context.Context, tid string) (removed int, more bool, err error) {
	if err := r.cfg.Linker.LinkNow(ctx); err != nil {
		return 0, false, err
	}
	err = r.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		removed, more = 0, false
		var last Link
		var h Head
		ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
		if errors.Is(err, r.cfg.TenantGone) || (err == nil && !ok) {
			return nil // being deleted, or no chain yet
		}
		if err != nil {
			return err
		}
		cutoff := barrier.TimeKey(t.Now.Add(-r.cfg.Keep))
		var seqs []string
		err = t.Scan(barrier.Tenant(tid).ChainSeqs(), "", r.cfg.Batch+1, func(_ barrier.Key, rest string) error {
			seqs = append(seqs, rest)
			return nil
		})
		if err != nil {
			return err
		}
		for i, rest := range seqs {
			if i == r.cfg.Batch {
				more = true
				break
			}
			seqKey, suffix, _ := strings.Cut(rest, "/")
			if suffix >= cutoff {
				break
			}
			if waiting, err := r.cfg.Waiting(t, tid, suffix); err != nil || waiting {
				if err != nil {
					return err
				}
				break
			}
			var l LineRecord
			ok, err := t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &l)
			if err == nil && ok {
				err = WithLink(t, tid, suffix, &l)
			}
			if err != nil {
				return err
			}
			if !ok || l.Link == nil || barrier.SeqKey(l.Link.Seq) != seqKey || l.Link.Seq != h.FirstSeq+uint64(removed) {
				break
			}
			if err := deleteLine(t, tid, suffix, &l); err != nil {
				return err
			}
			if err := t.Delete(barrier.Tenant(tid).ChainSeq(l.Link.Seq, suffix)); err != nil {
				return err
			}
			last = *l.Link
			removed++
			r.cfg.Removed(t)
		}
		if removed == 0 {
			more = false
			return nil
		}
		h.FirstSeq = last.Seq + 1
		if err := r.anchorChain(t, tid, &h, last.Seq, last.Hash); err != nil {
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
func (r *Retention) anchorChain(t *unit.Tx, tid string, h *Head, seq uint64, hash auditchain.Hash) error {
	ok, err := t.Has(barrier.Tenant(tid).Checkpoint(seq))
	if err != nil {
		return err
	}
	if !ok {
		// Checkpointer.Sign signs the head it is given: here one at the
		// anchor, already signed (no unsigned mark of it to remove) and
		// of no key yet (no rotation line to chain after it), so that
		// only the checkpoint is written and queued for export.
		anchor := Head{Seq: seq, Hash: hash, FirstSeq: h.FirstSeq, Since: h.Since, SignedSeq: seq}
		c, err := r.cfg.Checkpoints.Sign(t, tid, &anchor, false)
		if err != nil {
			return err
		}
		if seq > h.SignedSeq {
			h.SignedSeq, h.SignedAt, h.KeyID = seq, c.CreatedAt, c.KeyID
		}
	}
	var below []CheckpointRecord
	err = t.Scan(barrier.Tenant(tid).Checkpoints(), "", 0, func(k barrier.Key, rest string) error {
		if rest >= barrier.SeqKey(seq) {
			return store.ErrStop
		}
		var c CheckpointRecord
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
		waiting, err := r.cfg.Waiting(t, tid, barrier.TimeKey(c.CreatedAt)+"/checkpoint-"+barrier.SeqKey(c.Seq))
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

// pruneTenantPreChain removes up to Batch of tenant tid's lines that
// are older than the retention and than its chain (written before chains
// were, without a link), oldest first, in one transaction. A chained line
// among them is left to pruneTenantChain.
func (r *Retention) pruneTenantPreChain(ctx context.Context, tid string) (removed int, more bool, err error) {
	if err := r.cfg.Linker.LinkNow(ctx); err != nil {
		return 0, false, err
	}
	err = r.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		removed, more = 0, false
		prefix := barrier.Tenant(tid).Logs()
		// Lines are keyed log/<nanos>/<id>: everything before the cutoff's
		// nanos is due, if the chain began after it.
		cutoff := barrier.TimeKey(t.Now.Add(-r.cfg.Keep))
		var h Head
		ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
		if errors.Is(err, r.cfg.TenantGone) {
			return nil // being deleted: its logs go with it
		}
		if err != nil {
			return err
		}
		if ok {
			cutoff = min(cutoff, barrier.TimeKey(h.Since))
		}
		var due []string
		err = t.Scan(prefix, "", r.cfg.Batch+1, func(_ barrier.Key, suffix string) error {
			if suffix >= cutoff {
				return store.ErrStop
			}
			due = append(due, suffix)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > r.cfg.Batch {
			due, more = due[:r.cfg.Batch], true
		}
		for _, suffix := range due {
			// A line an audit sink has yet to receive is kept, and so
			// are the later ones: the sink's queue is in time order.
			if waiting, err := r.cfg.Waiting(t, tid, suffix); err != nil || waiting {
				more = false
				return err
			}
			var l LineRecord
			ok, err := t.GetRecord(prefix.Key(suffix), &l)
			if err == nil && ok {
				err = WithLink(t, tid, suffix, &l)
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
			if err := deleteLine(t, tid, suffix, &l); err != nil {
				return err
			}
			removed++
			r.cfg.Removed(t)
		}
		// A batch of chained lines only is the end of what this pass may
		// remove.
		more = more && removed > 0
		return nil
	})
	return removed, more, err
}

// deleteLine removes tenant tid's line l, stored at log/<suffix>, with its
// index entry in whichever layout (keys.go).
func deleteLine(t *unit.Tx, tid, suffix string, l *LineRecord) error {
	keys := []barrier.Key{barrier.Tenant(tid).Logs().Key(suffix), barrier.Tenant(tid).ChainLink(suffix), IndexKey(tid, l.EntityType, l.EntityID, suffix),
		barrier.Tenant(tid).LogEntityIndex(l.EntityType, l.EntityID).Key(suffix), barrier.Tenant(tid).LogTypeIndex(l.EntityType).Key(suffix)}
	for _, k := range keys {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// dropLegacyLogIndex removes the log-type index entries audit lines had
// before format version 1 (see keys.go), Batch entries a transaction.
// Nothing reads them any more; this only gives their space back. A store
// without any costs one read transaction.
func (r *Retention) dropLegacyLogIndex(ctx context.Context) error {
	var tenants []string
	err := r.cfg.Work.View(ctx, func(t *unit.Tx) error {
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
			err := r.cfg.Work.Update(ctx, func(t *unit.Tx) error {
				var keys []barrier.Key
				err := t.Scan(barrier.Tenant(tid).LogTypeIndexes(), "", r.cfg.Batch+1, func(k barrier.Key, _ string) error {
					keys = append(keys, k)
					return nil
				})
				if err != nil {
					return err
				}
				more = len(keys) > r.cfg.Batch
				for _, k := range keys[:min(len(keys), r.cfg.Batch)] {
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
