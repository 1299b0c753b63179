package tokenvault

import (
	"context"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Checkpoints: signed chain heads, by auditlog.Checkpointer
// (docs/audit-chain.md). The root runs its timed pass and serves
// SignAuditChain.

// runCheckpointer runs the timed checkpoint pass (checkpointOld) under
// v.bg until Close, while this instance holds the linker lease: the heads
// are the linker's to write, so that two instances' passes never sign
// (and write) one head at once.
func (v *Vault) runCheckpointer() {
	ctx := v.bg
	tick := time.NewTicker(auditlog.CheckpointTick(v.chainOpts.CheckpointInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if v.linkLease().Held() == 0 {
			continue
		}
		if _, err := v.checkpointOld(ctx, v.chainOpts.CheckpointInterval); err != nil && ctx.Err() == nil {
			v.logger.Error("tokenvault: signing audit checkpoints failed", "err", err)
		}
	}
}

// SignAuditChain signs tenant tenantID's audit chain head now, with the
// signing key in use, and returns the checkpoint. Every line written
// before the call is included: this instance links them first when it
// holds the linker lease or can take it, and otherwise waits for the
// instance that holds it to link them, up to twice
// AuditChainOptions.LinkerLease (past that, a linker that is stuck, it
// signs what is linked, and the rest is left to the next checkpoint).
// When every line is signed already by that key, it returns the last
// checkpoint instead; when every line is
// signed already by that key, it returns the last checkpoint instead
// (after RotateAuditKey, the head is signed again with the new key,
// after the line recording the rotation). The checkpoint
// is also queued for audit export. Checkpoints are otherwise signed every
// Options.AuditChain.CheckpointEvery lines and CheckpointInterval after an
// unsigned line; this one is for an auditor who wants the head signed
// now (before an export, or an inspection).
//
// This is a host-program (operator) operation: it takes no API key.
// Returns NotFound for an unknown or deleted tenant, StorageFull, or
// Internal.
func (v *Vault) SignAuditChain(ctx context.Context, tenantID string) (*auditchain.Checkpoint, error) {
	if !unit.ValidID(tenantID) {
		return nil, unit.NotFoundError("tenant")
	}
	// The queued lines are linked first, so that the checkpoint covers
	// every line written before the call.
	through := barrier.TimeKey(v.now())
	if err := v.linkNow(ctx); err != nil {
		return nil, err
	}
	if err := v.awaitLinked(ctx, tenantID, through); err != nil {
		return nil, err
	}
	var out auditchain.Checkpoint
	err := v.update(ctx, func(t *txn) error {
		reg, err := t.Has(barrier.Tenant(tenantID).Registry())
		if err != nil {
			return err
		}
		if !reg {
			return unit.NotFoundError("tenant")
		}
		h := auditlog.Head{FirstSeq: 1, Since: t.Now}
		if _, err := t.GetRecord(barrier.Tenant(tenantID).ChainHead(), &h); err != nil {
			return err
		}
		s, err := t.signer()
		if err != nil {
			return err
		}
		if h.Seq == h.SignedSeq && h.KeyID == s.ID {
			var rec auditlog.CheckpointRecord
			ok, err := t.GetRecord(barrier.Tenant(tenantID).Checkpoint(h.SignedSeq), &rec)
			if err != nil {
				return err
			}
			if ok {
				out = rec.Checkpoint()
				return nil
			}
		}
		if out, err = t.v.checkpoints.Sign(t.Tx, tenantID, &h, false); err != nil {
			return err
		}
		return t.PutRecord(barrier.Tenant(tenantID).ChainHead(), &h)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// awaitLinked waits until no line of tenant tid written at or before
// through (a TimeKey) waits in the chain queue, polling, up to twice the
// linker lease; it returns nil then too (what is linked is signed), and
// an error only for a store failure or ctx's end.
func (v *Vault) awaitLinked(ctx context.Context, tid, through string) error {
	deadline := time.Now().Add(2 * v.chainOpts.LinkerLease)
	for {
		waiting := false
		err := v.view(ctx, func(t *txn) error {
			waiting = false
			return t.Scan(barrier.ChainQueue, "", 0, func(_ barrier.Key, rest string) error {
				nanos, r, _ := strings.Cut(rest, "/")
				if nanos > through {
					return barrier.ErrStop // in time order: the rest are later
				}
				if strings.HasPrefix(r, tid+"/") {
					waiting = true
					return barrier.ErrStop
				}
				return nil
			})
		})
		if err != nil || !waiting || time.Now().After(deadline) {
			return err
		}
		if err := v.linkNow(ctx); err != nil { // the lease may have come free
			return err
		}
		select {
		case <-ctx.Done():
			return v.result(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// signFinalCheckpoint signs the final checkpoint of tenant tid's chain,
// in t, the transaction of its deletion that removes its keyring
// (auditlog.Checkpointer.SignFinal).
func (t *txn) signFinalCheckpoint(tid string) error { return t.v.checkpoints.SignFinal(t.Tx, tid) }

// checkpointOld runs the timed pass once (auditlog.Checkpointer.SignOld).
func (v *Vault) checkpointOld(ctx context.Context, interval time.Duration) (int, error) {
	return v.checkpoints.SignOld(ctx, interval)
}
