package tokenvault

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
)

// The hash chain of the audit trail (docs/audit-chain.md; the format is
// package auditchain's).
//
// Each tenant's lines form one chain: line seq holds seq, the hash of
// line seq-1 and its own hash (chainLink, in its record), and the
// chain's head (chainHead, at tenant/<tid>/chain/head) holds the last
// seq and hash. A sequence index entry per line,
// chain/seq/<seq>/<nanos>/<id>, walks the chain in order by keys alone.
//
// A line is chained where its order becomes final: in the commit that
// writes it, or, for a read's line that a store took as an append (a
// line is never chained in its own optimistic first run, whose writes may
// be appended: appends.go), by the first chain pass after the append is
// folded. Either way the link is written in a write transaction of the
// store, with the head, so the chain never forks: on bbolt write
// transactions run one after another, and on PostgreSQL two instances
// extending one tenant's chain at once conflict on its head, and
// SERIALIZABLE runs one of them again (store/postgres: retries, then a
// table lock). A line not chained yet has a chain queue entry,
// sys/chainq/<nanos>/<tid>/<id>, written with it and removed by the
// commit that chains it; so a line appended before a crash is chained by
// the pass Open runs once the store has folded it.
//
// Lines written before the chain existed are not chained: the head's
// Since is when the tenant's chain began, and a verifier reports the
// lines older than it apart.

// chainBatch bounds the queued lines one chain pass chains per commit.
const chainBatch = 500

// chainInterval is how often the chainer looks for appended lines.
const chainInterval = 250 * time.Millisecond

// pendingLine is a line written in the transaction and not chained yet.
type pendingLine struct {
	tid, suffix string
	rec         logRecord
	// queued is whether its chain queue entry was written with it.
	queued bool
}

// pendingLines are the lines a transaction wrote, in order, chained by
// its commit.
var pendingLines = &txnLocal[[]pendingLine]{}

// pendLine has l, written at log/<suffix> of tenant tid, chained when t
// commits. In an optimistic first run on a store that appends, whose
// writes it may take as an append instead, its chain queue entry is
// written too (elsewhere a first run is applied in a write transaction,
// whose commit chains the line: an entry would only be written and
// removed again).
func (t *txn) pendLine(tid, suffix string, l *logRecord) error {
	queued := t.FirstRun() && t.v.barrier.Appends()
	if queued {
		if err := t.AppendIndex(barrier.Tenant(tid).ChainQueueEntry(suffix)); err != nil {
			return err
		}
	}
	p := pendingLines.of(t)
	*p = append(*p, pendingLine{tid: tid, suffix: suffix, rec: *l, queued: queued})
	return nil
}

// chains is the chain heads a commit read and moved, by tenant.
type chains struct {
	of    map[string]*chainOf
	order []string // the tenants, in the order first read
}

// chainOf is one tenant's chain in a commit.
type chainOf struct {
	head  *chainHead
	moved bool
	// from is the head's seq when read, and since the time (TimeKey) of
	// the first line after its last checkpoint, when chained by this
	// commit: for the unsigned mark (checkpoints.go).
	from  uint64
	since string
}

// head returns tenant tid's chain, its head read on first use.
func (c *chains) head(t *txn, tid string) (*chainOf, error) {
	if s := c.of[tid]; s != nil {
		return s, nil
	}
	h := &chainHead{}
	ok, err := t.getRecord(barrier.Tenant(tid).ChainHead(), h)
	if err != nil {
		return nil, err
	}
	if !ok {
		*h = chainHead{FirstSeq: 1, Since: t.now}
	}
	return c.add(tid, h), nil
}

// add makes h tenant tid's head in c.
func (c *chains) add(tid string, h *chainHead) *chainOf {
	if c.of == nil {
		c.of = map[string]*chainOf{}
	}
	s := &chainOf{head: h, from: h.Seq}
	c.of[tid] = s
	c.order = append(c.order, tid)
	return s
}

// chainCommit chains the lines t wrote and writes the heads it moved: the
// part of t's commit that is the chain's. A store may run the commit
// again on a fresh transaction, so the heads are read afresh each time.
func (t *txn) chainCommit() error {
	var c chains
	for _, p := range *pendingLines.of(t) {
		if p.queued {
			if err := t.Delete(barrier.Tenant(p.tid).ChainQueueEntry(p.suffix)); err != nil {
				return err
			}
		}
		if err := t.chainLine(&c, p.tid, p.suffix, &p.rec); err != nil {
			return err
		}
	}
	return t.putHeads(&c)
}

// chainLine links the line rec, stored at log/<suffix> of tenant tid, to
// the end of the tenant's chain, and writes it again with its link and
// its sequence index entry.
func (t *txn) chainLine(c *chains, tid, suffix string, rec *logRecord) error {
	s, err := c.head(t, tid)
	if err != nil {
		return err
	}
	h := s.head
	link := chainLink{Seq: h.Seq + 1, Prev: h.Hash}
	line := chainedLine(tid, keyID(suffix), rec)
	link.Hash = auditchain.LineHash(link.Prev, link.Seq, &line)
	rec.Link = &link
	if err := t.putRecord(barrier.Tenant(tid).Logs().Key(suffix), rec); err != nil {
		return err
	}
	if err := t.PutIndex(barrier.Tenant(tid).ChainSeq(link.Seq, suffix)); err != nil {
		return err
	}
	if link.Seq == h.SignedSeq+1 {
		s.since, _, _ = strings.Cut(suffix, "/")
	}
	h.Seq, h.Hash = link.Seq, link.Hash
	s.moved = true
	return nil
}

// putHeads writes the heads c moved, each signed first when a checkpoint
// is due (checkpointDue, checkpoints.go).
func (t *txn) putHeads(c *chains) error {
	for _, tid := range c.order {
		s := c.of[tid]
		if !s.moved {
			continue
		}
		if err := t.checkpointDue(tid, s); err != nil {
			return err
		}
		if err := t.putRecord(barrier.Tenant(tid).ChainHead(), s.head); err != nil {
			return err
		}
	}
	return nil
}

// chainedLine is what the chain covers of the line rec of tenant tid
// with id id.
func chainedLine(tid, id string, rec *logRecord) auditchain.Line {
	return auditchain.Line{
		TenantID: tid, ID: id, CreatedAt: rec.CreatedAt,
		ActorID: rec.ActorID, ActorType: rec.ActorType, EntityType: rec.EntityType, EntityID: rec.EntityID,
		Operation: rec.Operation, Message: rec.Message,
		Transform: rec.Transform, Channel: rec.Channel, Application: rec.Application,
	}
}

// chainQueued chains every line the chain queue holds (lines a store took
// as appends), after folding the store's appends, in transactions of at
// most chainBatch lines. A line whose tenant is gone, or which is gone,
// loses its entry and nothing else.
func (v *Vault) chainQueued(ctx context.Context) error {
	for {
		var n int
		if err := v.view(ctx, func(t *txn) error {
			n = 0
			return t.Scan(barrier.ChainQueue, "", 1, func(barrier.Key, string) error {
				n++
				return nil
			})
		}); err != nil || n == 0 {
			return err
		}
		err := v.update(ctx, func(t *txn) error {
			var c chains
			n = 0
			var keys []barrier.Key
			var rests []string
			if err := t.Scan(barrier.ChainQueue, "", chainBatch, func(k barrier.Key, rest string) error {
				keys, rests = append(keys, k), append(rests, rest)
				return nil
			}); err != nil {
				return err
			}
			for i, k := range keys {
				n++
				if err := t.Delete(k); err != nil {
					return err
				}
				// <nanos>/<tid>/<id>
				parts := strings.SplitN(rests[i], "/", 3)
				if len(parts) != 3 {
					continue
				}
				tid, suffix := parts[1], parts[0]+"/"+parts[2]
				var rec logRecord
				ok, err := t.getRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
				if errors.Is(err, errTenantGone) || (err == nil && (!ok || rec.Link != nil)) {
					continue // deleted with its tenant, removed, or chained already
				}
				if errors.Is(err, seal.ErrOpen) || errors.Is(err, errRecord) {
					// Altered in the store: chaining it would vouch for
					// it, and failing would stop every pass (and what
					// waits for them: listing, export, retention) for
					// good. Left off the chain, where a verification
					// reports it (Inserted).
					v.logger.Warn("tokenvault: an appended audit line does not open; left off the chain", "tenant_id", tid, "line", suffix)
					continue
				}
				if err != nil {
					return err
				}
				if err := t.chainLine(&c, tid, suffix, &rec); err != nil {
					return err
				}
			}
			return t.putHeads(&c)
		})
		if err != nil || n < chainBatch {
			return err
		}
	}
}

// chainer is the state of the goroutine that chains appended lines.
type chainer struct {
	// appended counts the calls whose lines a store took as appends.
	appended atomic.Uint64
}

// runChainer chains appended lines (chainQueued) every chainInterval
// while reads append them, and once at start: what an earlier Vault on
// this store appended, and the store folded when it opened.
func (v *Vault) runChainer() {
	ctx := v.bg
	seen := uint64(0)
	first := true
	tick := time.NewTicker(chainInterval)
	defer tick.Stop()
	for {
		if n := v.chainer.appended.Load(); first || n != seen {
			first = false
			seen = n
			if err := v.foldAppends(ctx); err != nil && ctx.Err() == nil {
				v.logger.Error("tokenvault: chaining audit lines failed", "err", err)
				first = true // try again at the next tick
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
