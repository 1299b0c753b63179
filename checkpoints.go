package tokenvault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// Checkpoints: signed chain heads (docs/audit-chain.md).
//
// A checkpoint is the vault's signature, with its signing key
// (audit_keys.go), over a tenant's chain head: the sequence number and
// hash of its last line, when, and whether it is the tenant's last
// (auditchain.Checkpoint). It is stored at
// tenant/<tid>/chain_checkpoint/<seq> (auditlog.CheckpointRecord), queued for
// audit export with the lines ("checkpoint-<seq>"), and the head records
// the last one (SignedSeq, SignedAt, KeyID). A head is signed:
//
//   - by the linker (chain_linker.go), in the batch that brings its
//     unsigned lines to Options.AuditChain.CheckpointEvery (putHeads):
//     never in a call's commit, which links nothing;
//   - by the background pass (runCheckpointer), on the instance holding
//     the linker lease, once its oldest unsigned line is
//     Options.AuditChain.CheckpointInterval old. The pass finds
//     those tenants without visiting the others: the first line chained
//     after a checkpoint writes a mark sys/chain-unsigned/<its nanos>/<tid>,
//     which the next checkpoint removes, and the pass walks the marks in
//     time order up to the first that is not old enough;
//   - by SignAuditChain (operator), at once;
//   - finally when the tenant is deleted (markDeleting), in the
//     transaction that removes its keyring: that checkpoint is Final, and
//     kept at sys/chain-final/<tid>, sealed by the system keyring, after
//     everything else of the tenant is gone;
//   - by log retention, at the new start of a pruned chain.
//
// The first checkpoint of a tenant signed with a key other than its last
// checkpoint's (after RotateAuditKey) is preceded, in the same
// transaction, by a chained line recording the rotation: so every chain
// says when its signing key changed, and the verifier of a chain sees the
// change between the checkpoints of the two keys. Not the final one: the
// deletion that signs it removes the tenant's keyring in the same
// transaction, so a line chained there could never be opened to be
// exported, and every export of the deleted tenant would miss the last
// line its final checkpoint vouches for. The final checkpoint signs the
// chain as it stands, and its own key id (signed) says which key it is.

// rotationMessage is the message of the line recording a signing key
// rotation in a tenant's chain.
func rotationMessage(from, to string) string {
	return fmt.Sprintf("Audit signing key rotated from %s to %s", from, to)
}

// signCheckpoint signs h, the head of tenant tid's chain, now, with the
// signing key in use: it writes the checkpoint record (and, when final,
// its copy at sys/chain-final/<tid>), queues it for audit export, removes
// the tenant's unsigned mark, and sets h.SignedSeq, SignedAt and KeyID.
// The caller writes h. When the key is not the one of h's last
// checkpoint, a line recording the rotation is chained first (moving h),
// unless the checkpoint is final (see above).
func (t *txn) signCheckpoint(tid string, h *auditlog.Head, final bool) (auditchain.Checkpoint, error) {
	s, err := t.signer()
	if err != nil {
		return auditchain.Checkpoint{}, err
	}
	if err := t.dropUnsignedMark(tid, h); err != nil {
		return auditchain.Checkpoint{}, err
	}
	if h.KeyID != "" && h.KeyID != s.id && !final {
		if err := t.chainRotationLine(tid, h, h.KeyID, s.id); err != nil {
			return auditchain.Checkpoint{}, err
		}
	}
	c := auditchain.Checkpoint{TenantID: tid, Seq: h.Seq, Hash: h.Hash, CreatedAt: t.Now, Final: final}
	c.Sign(s.priv)
	rec := auditlog.CheckpointRecordOf(&c)
	if err := t.PutRecord(barrier.Tenant(tid).Checkpoint(h.Seq), rec); err != nil {
		return auditchain.Checkpoint{}, err
	}
	if final {
		if err := t.PutRecord(barrier.FinalCheckpoint(tid), rec); err != nil {
			return auditchain.Checkpoint{}, err
		}
	}
	h.SignedSeq, h.SignedAt, h.KeyID = h.Seq, t.Now, s.id
	if err := t.queueForExport(tid, barrier.TimeKey(t.Now)+"/checkpoint-"+barrier.SeqKey(h.Seq)); err != nil {
		return auditchain.Checkpoint{}, err
	}
	return c, nil
}

// dropUnsignedMark removes the unsigned mark of tenant tid's chain, whose
// head is h: the mark is named by the first unsigned line's time, read
// from its sequence index entry. (A tail begun in this transaction has no
// mark, and a mark left behind is removed by the timed pass.)
func (t *txn) dropUnsignedMark(tid string, h *auditlog.Head) error {
	if h.Seq <= h.SignedSeq {
		return nil
	}
	var since string
	err := t.Scan(barrier.Tenant(tid).ChainSeqs().Sub(barrier.SeqKey(h.SignedSeq+1)+"/"), "", 1, func(_ barrier.Key, rest string) error {
		since, _, _ = strings.Cut(rest, "/")
		return nil
	})
	if err != nil || since == "" {
		return err
	}
	return t.Delete(barrier.Tenant(tid).UnsignedChain(since))
}

// chainRotationLine writes and chains, at the end of h (tenant tid's
// head), the line recording that the signing key changed from one key id
// to another, with its index and export queue entries.
func (t *txn) chainRotationLine(tid string, h *auditlog.Head, from, to string) error {
	l := auditlog.LineRecord{Line: auditchain.Line{ActorType: ActorSystem, EntityType: EntityTenant, EntityID: tid, Operation: OpUpdate,
		Message: rotationMessage(from, to), CreatedAt: t.Now}}
	suffix := barrier.TimeKey(t.Now) + "/" + t.v.ids.Next(t.Now)
	if err := t.PutRecord(barrier.Tenant(tid).Logs().Key(suffix), &l); err != nil {
		return err
	}
	var c auditlog.Chains
	c.Add(tid, h)
	if err := c.Link(t.Tx, tid, suffix, &l); err != nil {
		return err
	}
	if err := t.PutIndex(auditlog.IndexKey(tid, EntityTenant, tid, suffix)); err != nil {
		return err
	}
	return t.queueForExport(tid, suffix)
}

// checkpointDue signs the head of s, tenant tid's chain just moved in
// this commit, when its unsigned lines reached CheckpointEvery; else,
// when its unsigned tail began in this commit, writes the tenant's
// unsigned mark.
func (t *txn) checkpointDue(tid string, s *auditlog.Chain) error {
	h := s.Head
	if every := t.v.chainOpts.CheckpointEvery; every > 0 && h.Seq-h.SignedSeq >= uint64(every) {
		_, err := t.signCheckpoint(tid, h, false)
		return err
	}
	if h.Seq > h.SignedSeq && s.From <= h.SignedSeq {
		since := s.Since
		if since == "" {
			since = barrier.TimeKey(t.Now)
		}
		return t.PutIndex(barrier.Tenant(tid).UnsignedChain(since))
	}
	return nil
}

// checkpointEvery signs, in a linking transaction, the head of the
// tenant of the chain queue entry <nanos>/<tid>/<id> just linked when its
// unsigned lines reached CheckpointEvery: so a checkpoint falls every
// CheckpointEvery lines, whatever the linker's batches hold.
func (t *txn) checkpointEvery(c *auditlog.Chains, rest string) error {
	every := t.v.chainOpts.CheckpointEvery
	_, rest, _ = strings.Cut(rest, "/")
	tid, _, _ := strings.Cut(rest, "/")
	s := c.Of(tid)
	if every <= 0 || s == nil || s.Head.Seq-s.Head.SignedSeq < uint64(every) {
		return nil
	}
	_, err := t.signCheckpoint(tid, s.Head, false)
	return err
}

// checkpointBatch bounds the marks one timed pass reads per scan, and the
// tenants it signs per transaction.
const checkpointBatch = 100

// checkpointOld signs the head of every tenant whose oldest unsigned line
// is interval old or older (on the Vault's clock), up to checkpointBatch
// tenants per transaction, and returns how many it signed. A mark whose tenant is gone, or
// whose chain has no unsigned line any more, is removed.
func (v *Vault) checkpointOld(ctx context.Context, interval time.Duration) (int, error) {
	cutoff := barrier.TimeKey(v.now().Add(-interval))
	signed := 0
	after := ""
	var errs []error
	for {
		var marks []string
		more := false
		if err := v.view(ctx, func(t *txn) error {
			marks, more = marks[:0], true
			return t.Scan(barrier.UnsignedChains, after, checkpointBatch, func(_ barrier.Key, rest string) error {
				if len(rest) < len(cutoff) || rest[:len(cutoff)] > cutoff {
					more = false
					return store.ErrStop // the marks are in time order: the rest are younger
				}
				marks = append(marks, rest)
				return nil
			})
		}); err != nil {
			return signed, err
		}
		n, err := v.checkpointMarks(ctx, marks)
		signed += n
		if err != nil {
			errs = append(errs, err)
		}
		if !more || len(marks) < checkpointBatch {
			return signed, errors.Join(errs...)
		}
		after = marks[len(marks)-1]
	}
}

// checkpointMarks signs the heads of the tenants the unsigned marks
// <nanos>/<tid> name, in one transaction (one commit, one fsync, for up to
// checkpointBatch tenants), and returns how many it signed. When that
// transaction fails, each mark is tried in a transaction of its own, so
// that one tenant that cannot be signed holds up no other.
func (v *Vault) checkpointMarks(ctx context.Context, marks []string) (int, error) {
	signed := 0
	err := v.update(ctx, func(t *txn) error {
		signed = 0
		for _, m := range marks {
			ok, err := t.checkpointMark(m)
			if err != nil {
				return err
			}
			if ok {
				signed++
			}
		}
		return nil
	})
	if err == nil || len(marks) == 1 || ctx.Err() != nil {
		return signed, err
	}
	signed = 0
	var errs []error
	for _, m := range marks {
		n, err := v.checkpointMarks(ctx, []string{m})
		signed += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return signed, errors.Join(errs...)
}

// checkpointMark removes the unsigned mark <nanos>/<tid> and signs the
// head of its tenant, in t; it reports whether it signed (not for a
// tenant gone, or whose head is signed already).
func (t *txn) checkpointMark(mark string) (bool, error) {
	_, tid, _ := strings.Cut(mark, "/")
	if err := t.Delete(barrier.UnsignedChains.Key(mark)); err != nil {
		return false, err
	}
	var h auditlog.Head
	ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
	if errors.Is(err, errTenantGone) || (err == nil && (!ok || h.Seq <= h.SignedSeq)) {
		return false, nil // deleted with its tenant, or signed already
	}
	if err != nil {
		return false, err
	}
	if _, err := t.signCheckpoint(tid, &h, false); err != nil {
		return false, err
	}
	return true, t.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
}

// checkpointTick is how often runCheckpointer looks for old unsigned
// lines: a tenth of the interval, between a second and the interval.
func checkpointTick(interval time.Duration) time.Duration {
	return min(max(interval/10, time.Second), interval)
}

// runCheckpointer runs the timed checkpoint pass (checkpointOld) under
// v.bg until Close, while this instance holds the linker lease: the heads
// are the linker's to write, so that two instances' passes never sign
// (and write) one head at once.
func (v *Vault) runCheckpointer() {
	ctx := v.bg
	tick := time.NewTicker(checkpointTick(v.chainOpts.CheckpointInterval))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if v.linkLease().held() == 0 {
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
		if h.Seq == h.SignedSeq && h.KeyID == s.id {
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
		if out, err = t.signCheckpoint(tenantID, &h, false); err != nil {
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
					return store.ErrStop // in time order: the rest are later
				}
				if strings.HasPrefix(r, tid+"/") {
					waiting = true
					return store.ErrStop
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
// in t, the transaction of its deletion that removes its keyring (so
// before it does): afterwards nothing of the tenant can be opened, and the
// checkpoint's copy at sys/chain-final/<tid> is what is left of its chain.
func (t *txn) signFinalCheckpoint(tid string) error {
	h := auditlog.Head{FirstSeq: 1, Since: t.Now}
	if _, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
		return err
	}
	if _, err := t.signCheckpoint(tid, &h, true); err != nil {
		return err
	}
	return t.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
}
