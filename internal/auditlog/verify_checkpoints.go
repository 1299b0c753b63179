package auditlog

import (
	"context"
	"strconv"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// addCheckpoints gives the Verifier the tenant's checkpoints, read in
// batches. A checkpoint record that does not open is BadCheckpoint at
// the sequence number of its key; a head that names a checkpoint the
// store no longer holds is BadCheckpoint at that number. A checkpoint
// past the head the walk read is left out when the head has since moved
// past it (signed while the walk ran), and kept when it has not: then it
// vouches for lines that are not there (a tail cut off, an older head put
// back), and the Verifier reports them Missing.
func (w *chainVerifyWalk) addCheckpoints(ctx context.Context) error {
	now, err := w.headNow(ctx)
	if err != nil {
		return err
	}
	after := ""
	signedFound := false
	for {
		n := 0
		err := w.work.View(ctx, func(t *unit.Tx) error {
			vals, err := t.ScanValuesAfter(barrier.Tenant(w.tid).Checkpoints(), after, chainVerifyBatch)
			if err != nil {
				return err
			}
			n = len(vals)
			for _, sv := range vals {
				after = sv.Rest
				seq, perr := strconv.ParseUint(sv.Rest, 16, 64)
				var rec CheckpointRecord
				signedFound = signedFound || (perr == nil && seq == w.head.SignedSeq)
				if perr != nil || t.OpenRecord(sv.Key, sv.Raw, &rec) != nil {
					w.problem(auditchain.BadCheckpoint, seq, 0, "", "the checkpoint record does not open: it was altered")
					continue
				}
				if w.headOK && rec.Seq > w.head.Seq && rec.Seq <= now {
					continue // signed after the walk read the head
				}
				w.ver.AddCheckpoint(rec.Checkpoint())
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n < chainVerifyBatch {
			break
		}
	}
	if w.headOK && w.head.SignedSeq > 0 && !signedFound {
		w.problem(auditchain.BadCheckpoint, w.head.SignedSeq, 0, "",
			"the chain head names a checkpoint at this sequence number, which the store does not hold")
	}
	return nil
}

// headNow is the head's sequence number as the store holds it now (that
// of the head the walk read if it does not open).
func (w *chainVerifyWalk) headNow(ctx context.Context) (uint64, error) {
	seq := w.head.Seq
	err := w.work.View(ctx, func(t *unit.Tx) error {
		key := barrier.Tenant(w.tid).ChainHead()
		raw, err := t.GetWrapped(key)
		if err != nil || raw == nil {
			return err
		}
		var h Head
		if t.OpenRecord(key, raw, &h) == nil {
			seq = max(seq, h.Seq)
		}
		return nil
	})
	return seq, err
}
