package vaulttest

import (
	"context"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ChainWalk is what WalkChain found of a tenant's chain in the store.
type ChainWalk struct {
	// FirstSeq and LastSeq bound the sequence index walked; Head is the
	// head's seq, HeadFirstSeq its first_seq.
	FirstSeq, LastSeq, Head, HeadFirstSeq uint64
	// Anchor is the hash the first line's prev must equal: zero from seq
	// 1, else the checkpoint's at FirstSeq-1.
	Anchor auditchain.Hash
	// Lines counts the tenant's lines, Chained those on the chain,
	// Unchained those without a link written since the chain began,
	// PreChain those older than it without one, Queued its chain queue
	// entries.
	Lines, Chained, Unchained, PreChain, Queued int
	// ByEntity counts the chained lines by entity id and operation
	// ("<id> <op>").
	ByEntity map[string]int
	// Problems is every broken rule, in words: an empty list is a sound
	// chain.
	Problems []string
}

// WalkChain folds the appends and links the queue if v may (as the linker
// does), then walks tenant tid's chain by its sequence index, for tests:
// each index entry names a line whose link holds that seq, the hash of
// the one before (the anchor checkpoint's for the first) and its own hash
// as auditchain computes it; seqs run from the head's first_seq to its seq
// with no gap or repeat; no line is on it twice; every line of the tenant
// written since the chain began is on it.
func WalkChain(ctx context.Context, v *tokenvault.Vault, tid string) (*ChainWalk, error) {
	if err := testseam.Of(v).Linker.LinkNow(ctx); err != nil {
		return nil, err
	}
	w := &ChainWalk{ByEntity: map[string]int{}}
	bad := func(format string, args ...any) { w.Problems = append(w.Problems, fmt.Sprintf(format, args...)) }
	err := testseam.Of(v).Work.View(ctx, func(t *unit.Tx) error {
		*w = ChainWalk{ByEntity: map[string]int{}}
		var head auditlog.Head
		if _, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &head); err != nil {
			return err
		}
		w.Head, w.HeadFirstSeq = head.Seq, head.FirstSeq
		if head.FirstSeq > 1 {
			a, err := chainAnchor(t, tid, head.FirstSeq)
			if err != nil {
				bad("%v", err)
			}
			w.Anchor = a
		}
		prev := w.Anchor
		seq := head.FirstSeq - 1
		if head.FirstSeq == 0 {
			seq = 0
		}
		w.FirstSeq = seq + 1
		onChain := map[string]uint64{}
		err := t.ScanKeys(barrier.Tenant(tid).ChainSeqs(), func(_ barrier.Key, rest string) error {
			seq++
			s, suffix, _ := strings.Cut(rest, "/")
			if s != barrier.SeqKey(seq) {
				bad("index entry %q where seq %d was due", rest, seq)
			}
			if at, dup := onChain[suffix]; dup {
				bad("line %s on the chain at %d and at %s", suffix, at, s)
			}
			onChain[suffix] = seq
			var rec auditlog.LineRecord
			ok, err := t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
			if err == nil && ok {
				err = auditlog.WithLink(t, tid, suffix, &rec)
			}
			if err != nil {
				return err
			}
			if !ok {
				bad("seq %s names line %s, which is missing", s, suffix)
				return nil
			}
			if rec.Link == nil || rec.Link.Seq != seq || rec.Link.Prev != prev {
				bad("line %s at seq %d has link %+v, want prev %s", suffix, seq, rec.Link, prev)
				if rec.Link == nil {
					return nil
				}
			}
			line := auditlog.ChainedLine(tid, unit.KeyID(suffix), &rec)
			if h := auditchain.LineHash(rec.Link.Prev, rec.Link.Seq, &line); h != rec.Link.Hash {
				bad("line %s: hash %s, stored %s", suffix, h, rec.Link.Hash)
			}
			prev = rec.Link.Hash
			w.ByEntity[rec.EntityID+" "+rec.Operation]++
			return nil
		})
		if err != nil {
			return err
		}
		w.LastSeq, w.Chained = seq, len(onChain)
		if head.Seq != seq || head.Hash != prev {
			bad("head at %d %s, chain ends at %d %s", head.Seq, head.Hash, seq, prev)
		}
		err = t.ScanKeys(barrier.Tenant(tid).Logs(), func(k barrier.Key, suffix string) error {
			w.Lines++
			if _, ok := onChain[suffix]; ok {
				return nil
			}
			var rec auditlog.LineRecord
			if _, err := t.GetRecord(k, &rec); err != nil {
				return err
			}
			if err := auditlog.WithLink(t, tid, suffix, &rec); err != nil {
				return err
			}
			switch {
			case rec.Link != nil:
				bad("line %s holds link %+v but is not on the chain", suffix, rec.Link)
			case rec.CreatedAt.Before(head.Since):
				w.PreChain++
			default:
				w.Unchained++
				bad("line %s (%s %s) is not chained", suffix, rec.EntityID, rec.Operation)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return t.ScanKeys(barrier.ChainQueue, func(_ barrier.Key, rest string) error {
			if parts := strings.SplitN(rest, "/", 3); len(parts) == 3 && parts[1] == tid {
				w.Queued++
				bad("chain queue entry %s left", rest)
			}
			return nil
		})
	})
	return w, err
}

// ChainAnchor returns, for tests, the checkpoint at the start of tenant
// tid's chain, before its first line kept (nil for a chain never pruned),
// and every checkpoint of the tenant's, by seq.
func ChainAnchor(ctx context.Context, v *tokenvault.Vault, tid string) (anchor *auditchain.Checkpoint, all []auditchain.Checkpoint, err error) {
	err = testseam.Of(v).Work.View(ctx, func(t *unit.Tx) error {
		anchor, all = nil, nil
		var h auditlog.Head
		if _, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
			return err
		}
		var keys []barrier.Key
		err := t.ScanKeys(barrier.Tenant(tid).Checkpoints(), func(k barrier.Key, _ string) error {
			keys = append(keys, k)
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			var r auditlog.CheckpointRecord
			if _, err := t.GetRecord(k, &r); err != nil {
				return err
			}
			c := r.Checkpoint()
			all = append(all, c)
			if h.FirstSeq > 1 && c.Seq == h.FirstSeq-1 {
				anchor = &c
			}
		}
		return nil
	})
	return anchor, all, err
}

// AppendedCalls is, for tests, how many calls of v a store took as
// appends (their lines linked by the linker).
func AppendedCalls(v *tokenvault.Vault) uint64 { return testseam.Of(v).Linker.AppendedCalls() }

// chainAnchor is the hash a pruned chain of tenant tid, whose first line
// left is firstSeq, starts from: the anchor checkpoint's. It is an error
// when the checkpoint is missing.
func chainAnchor(t *unit.Tx, tid string, firstSeq uint64) (auditchain.Hash, error) {
	var c auditlog.CheckpointRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Checkpoint(firstSeq-1), &c)
	if err != nil {
		return auditchain.Hash{}, err
	}
	if !ok {
		return auditchain.Hash{}, fmt.Errorf("tokenvault: tenant %s: no checkpoint at %d, before the first line kept", tid, firstSeq-1)
	}
	return c.Hash, nil
}
