package auditlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// Checkpoints: signed chain heads (docs/audit-chain.md).
//
// A checkpoint is the vault's signature, with its signing key
// (signing.go), over a tenant's chain head: the sequence number and
// hash of its last line, when, and whether it is the tenant's last
// (auditchain.Checkpoint). It is stored at
// tenant/<tid>/chain_checkpoint/<seq> (CheckpointRecord), queued for
// audit export with the lines ("checkpoint-<seq>"), and the head records
// the last one (SignedSeq, SignedAt, KeyID). A head is signed:
//
//   - by the linker (the root's chain_linker.go), in the batch that brings its
//     unsigned lines to Options.AuditChain.CheckpointEvery (Due, EveryLines):
//     never in a call's commit, which links nothing;
//   - by the background pass (SignOld, which the root runs), on the instance holding
//     the linker lease, once its oldest unsigned line is
//     Options.AuditChain.CheckpointInterval old. The pass finds
//     those tenants without visiting the others: the first line chained
//     after a checkpoint writes a mark sys/chain-unsigned/<its nanos>/<tid>,
//     which the next checkpoint removes, and the pass walks the marks in
//     time order up to the first that is not old enough;
//   - by the root's SignAuditChain (operator), at once;
//   - finally when the tenant is deleted (SignFinal), in the
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

// CheckpointConfig is what a Checkpointer needs of the Vault.
type CheckpointConfig struct {
	// Work runs the timed pass's units of work.
	Work *unit.Work
	// Every is AuditChainOptions.CheckpointEvery: a head is signed once
	// it has this many unsigned lines (0: never by count).
	Every int
	// Signer is the signing key in use, read in t.
	Signer func(t *unit.Tx) (*Signer, error)
	// Queue queues what is at log/<suffix> of tenant tid (a line, or a
	// checkpoint named checkpoint-<seq>) for audit export, in t.
	Queue func(t *unit.Tx, tid, suffix string) error
	// NewID is a new time-ordered line id.
	NewID func(now time.Time) string
	// TenantGone is the error a read of a deleted tenant's records
	// returns (barrier.Config.TenantGone).
	TenantGone error
	// Now is the Vault's clock.
	Now func() time.Time
}

// Checkpointer signs the checkpoints of every tenant's chain.
type Checkpointer struct{ cfg CheckpointConfig }

// NewCheckpointer is the Checkpointer of cfg.
func NewCheckpointer(cfg CheckpointConfig) *Checkpointer { return &Checkpointer{cfg: cfg} }

// RotationMessage is the message of the line recording a signing key
// rotation in a tenant's chain.
func RotationMessage(from, to string) string {
	return fmt.Sprintf("Audit signing key rotated from %s to %s", from, to)
}

// Sign signs h, the head of tenant tid's chain, now, with the
// signing key in use: it writes the checkpoint record (and, when final,
// its copy at sys/chain-final/<tid>), queues it for audit export, removes
// the tenant's unsigned mark, and sets h.SignedSeq, SignedAt and KeyID.
// The caller writes h. When the key is not the one of h's last
// checkpoint, a line recording the rotation is chained first (moving h),
// unless the checkpoint is final (see above).
func (c *Checkpointer) Sign(t *unit.Tx, tid string, h *Head, final bool) (auditchain.Checkpoint, error) {
	s, err := c.cfg.Signer(t)
	if err != nil {
		return auditchain.Checkpoint{}, err
	}
	if err := dropUnsignedMark(t, tid, h); err != nil {
		return auditchain.Checkpoint{}, err
	}
	if h.KeyID != "" && h.KeyID != s.ID && !final {
		if err := c.chainRotationLine(t, tid, h, h.KeyID, s.ID); err != nil {
			return auditchain.Checkpoint{}, err
		}
	}
	cp := auditchain.Checkpoint{TenantID: tid, Seq: h.Seq, Hash: h.Hash, CreatedAt: t.Now, Final: final}
	cp.Sign(s.Key)
	rec := CheckpointRecordOf(&cp)
	if err := t.PutRecord(barrier.Tenant(tid).Checkpoint(h.Seq), rec); err != nil {
		return auditchain.Checkpoint{}, err
	}
	if final {
		if err := t.PutRecord(barrier.FinalCheckpoint(tid), rec); err != nil {
			return auditchain.Checkpoint{}, err
		}
	}
	h.SignedSeq, h.SignedAt, h.KeyID = h.Seq, t.Now, s.ID
	if err := c.cfg.Queue(t, tid, barrier.TimeKey(t.Now)+"/checkpoint-"+barrier.SeqKey(h.Seq)); err != nil {
		return auditchain.Checkpoint{}, err
	}
	return cp, nil
}

// dropUnsignedMark removes the unsigned mark of tenant tid's chain, whose
// head is h: the mark is named by the first unsigned line's time, read
// from its sequence index entry. (A tail begun in this transaction has no
// mark, and a mark left behind is removed by the timed pass.)
func dropUnsignedMark(t *unit.Tx, tid string, h *Head) error {
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
func (c *Checkpointer) chainRotationLine(t *unit.Tx, tid string, h *Head, from, to string) error {
	l := LineRecord{Line: auditchain.Line{ActorType: unit.ActorSystem, EntityType: unit.EntityTenant, EntityID: tid, Operation: unit.OpUpdate,
		Message: RotationMessage(from, to), CreatedAt: t.Now}}
	suffix := barrier.TimeKey(t.Now) + "/" + c.cfg.NewID(t.Now)
	if err := t.PutRecord(barrier.Tenant(tid).Logs().Key(suffix), &l); err != nil {
		return err
	}
	var cs Chains
	cs.Add(tid, h)
	if err := cs.Link(t, tid, suffix, &l); err != nil {
		return err
	}
	if err := t.PutIndex(IndexKey(tid, unit.EntityTenant, tid, suffix)); err != nil {
		return err
	}
	return c.cfg.Queue(t, tid, suffix)
}

// Due signs the head of s, tenant tid's chain just moved in
// this commit, when its unsigned lines reached CheckpointEvery; else,
// when its unsigned tail began in this commit, writes the tenant's
// unsigned mark.
func (c *Checkpointer) Due(t *unit.Tx, tid string, s *Chain) error {
	h := s.Head
	if every := c.cfg.Every; every > 0 && h.Seq-h.SignedSeq >= uint64(every) {
		_, err := c.Sign(t, tid, h, false)
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

// EveryLines signs, in a linking transaction, the head of the
// tenant of the chain queue entry <nanos>/<tid>/<id> just linked when its
// unsigned lines reached CheckpointEvery: so a checkpoint falls every
// CheckpointEvery lines, whatever the linker's batches hold.
func (c *Checkpointer) EveryLines(t *unit.Tx, cs *Chains, rest string) error {
	every := c.cfg.Every
	_, rest, _ = strings.Cut(rest, "/")
	tid, _, _ := strings.Cut(rest, "/")
	s := cs.Of(tid)
	if every <= 0 || s == nil || s.Head.Seq-s.Head.SignedSeq < uint64(every) {
		return nil
	}
	_, err := c.Sign(t, tid, s.Head, false)
	return err
}

// checkpointBatch bounds the marks one timed pass reads per scan, and the
// tenants it signs per transaction.
const checkpointBatch = 100

// SignOld signs the head of every tenant whose oldest unsigned line
// is interval old or older (on the Vault's clock), up to checkpointBatch
// tenants per transaction, and returns how many it signed. A mark whose tenant is gone, or
// whose chain has no unsigned line any more, is removed.
func (c *Checkpointer) SignOld(ctx context.Context, interval time.Duration) (int, error) {
	cutoff := barrier.TimeKey(c.cfg.Now().Add(-interval))
	signed := 0
	after := ""
	var errs []error
	for {
		var marks []string
		more := false
		if err := c.cfg.Work.View(ctx, func(t *unit.Tx) error {
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
		n, err := c.signMarks(ctx, marks)
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

// signMarks signs the heads of the tenants the unsigned marks
// <nanos>/<tid> name, in one transaction (one commit, one fsync, for up to
// checkpointBatch tenants), and returns how many it signed. When that
// transaction fails, each mark is tried in a transaction of its own, so
// that one tenant that cannot be signed holds up no other.
func (c *Checkpointer) signMarks(ctx context.Context, marks []string) (int, error) {
	signed := 0
	err := c.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		signed = 0
		for _, m := range marks {
			ok, err := c.signMark(t, m)
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
		n, err := c.signMarks(ctx, []string{m})
		signed += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return signed, errors.Join(errs...)
}

// signMark removes the unsigned mark <nanos>/<tid> and signs the
// head of its tenant, in t; it reports whether it signed (not for a
// tenant gone, or whose head is signed already).
func (c *Checkpointer) signMark(t *unit.Tx, mark string) (bool, error) {
	_, tid, _ := strings.Cut(mark, "/")
	if err := t.Delete(barrier.UnsignedChains.Key(mark)); err != nil {
		return false, err
	}
	var h Head
	ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
	if errors.Is(err, c.cfg.TenantGone) || (err == nil && (!ok || h.Seq <= h.SignedSeq)) {
		return false, nil // deleted with its tenant, or signed already
	}
	if err != nil {
		return false, err
	}
	if _, err := c.Sign(t, tid, &h, false); err != nil {
		return false, err
	}
	return true, t.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
}

// CheckpointTick is how often the timed pass (SignOld) runs, looking for old unsigned
// lines: a tenth of the interval, between a second and the interval.
func CheckpointTick(interval time.Duration) time.Duration {
	return min(max(interval/10, time.Second), interval)
}

// SignFinal signs the final checkpoint of tenant tid's chain,
// in t, the transaction of its deletion that removes its keyring (so
// before it does): afterwards nothing of the tenant can be opened, and the
// checkpoint's copy at sys/chain-final/<tid> is what is left of its chain.
func (c *Checkpointer) SignFinal(t *unit.Tx, tid string) error {
	h := Head{FirstSeq: 1, Since: t.Now}
	if _, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
		return err
	}
	if _, err := c.Sign(t, tid, &h, true); err != nil {
		return err
	}
	return t.PutRecord(barrier.Tenant(tid).ChainHead(), &h)
}
