package tokenvault

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// The linker: what chains the queued audit lines (chain.go), beside the
// commits that wrote them.
//
// Every Vault runs one (runChainer), and the one whose instance holds the
// linker lease (internal/lease) links: every chainInterval it takes the queue in
// batches of chainBatch lines, each batch one transaction that checks the
// lease first (lease.Check), links the lines, writes the heads and signs
// the checkpoints that are due; the timed checkpoint pass runs on the
// same instance (runCheckpointer). The others only watch the backlog (for
// Stats) and take the lease when it is released or expires.
//
// How soon a line is linked: under normal load within chainInterval (a
// quarter of a second) of its commit, plus the time to link what was
// queued before it (a batch of 500 lines is one transaction); when the
// holder's process dies, within the lease's time (AuditChainOptions.
// LinkerLease, 10 s by default) plus chainInterval, by the next holder;
// after a clean Close, at once, by whichever instance looks next. Until
// then the line is committed, listed, and exported once linked (an audit
// export waits for its link), and a verification reports it apart
// (auditchain.Report.Unlinked).
//
// Operations that need the chain to be current (verifying, exporting,
// signing a checkpoint on demand, retention) link first if this instance
// holds the lease or can take it (linkNow), and otherwise leave the lines
// to the holder: they never wait for a lease another instance holds.
// Listing and reading logs needs no link at all.

// chainBatch bounds the queued lines one linking transaction links.
const chainBatch = 500

// chainInterval is how often the linker looks for queued lines.
const chainInterval = 250 * time.Millisecond

// backlogCap bounds the queue entries a backlog measure counts.
const backlogCap = 10 * chainBatch

// backlogEvery is how often the backlog is measured.
const backlogEvery = time.Second

// chainer is the state of the linker.
type chainer struct {
	// appended counts the calls whose lines a store took as appends:
	// the linker folds them in before it looks at the queue.
	appended atomic.Uint64

	leaseOnce sync.Once
	lease     *lease.Lease

	// unlinked is the backlog as last measured (at most backlogCap), and
	// oldest the time (Unix nanoseconds) of its oldest line, 0 if none.
	unlinked atomic.Int64
	oldest   atomic.Int64
}

// linkLease is the linker lease of v.
func (v *Vault) linkLease() *lease.Lease {
	c := &v.chainer
	c.leaseOnce.Do(func() {
		c.lease = lease.New(lease.Config{Name: lease.Linker, TTL: v.chainOpts.LinkerLease, Instance: v.instance, Work: v.work, Now: v.now})
	})
	return c.lease
}

// linkNow folds the store's appends and links every queued line, if this
// instance holds the linker lease or can take it; otherwise it returns at
// once, the lines left to the holder. Returns the store's errors.
func (v *Vault) linkNow(ctx context.Context) error {
	if err := v.foldAppends(ctx); err != nil {
		return err
	}
	epoch, ok, err := v.linkLease().Hold(ctx)
	if err != nil || !ok {
		return err
	}
	return v.linkQueued(ctx, epoch)
}

// linkQueued links every line the chain queue holds, in transactions of
// at most chainBatch lines, each of which links only while this instance
// holds the linker lease in epoch: on losing it, it stops and returns
// nil (the new holder goes on). A line whose tenant is gone, or which is
// gone, loses its entry and nothing else.
func (v *Vault) linkQueued(ctx context.Context, epoch uint64) error {
	for first := true; ; first = false {
		if !first {
			// A long backlog outlasts a lease: renewed between batches
			// (hold writes only when due).
			if e, ok, err := v.linkLease().Hold(ctx); err != nil || !ok || e != epoch {
				return err
			}
		}
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
		err := v.update(store.WithOwnTransaction(ctx), func(t *txn) error {
			n = 0
			if err := lease.Check(t.Tx, lease.Linker, v.instance, epoch); err != nil {
				return err
			}
			var keys []barrier.Key
			var rests []string
			if err := t.Scan(barrier.ChainQueue, "", chainBatch, func(k barrier.Key, rest string) error {
				keys, rests = append(keys, k), append(rests, rest)
				return nil
			}); err != nil {
				return err
			}
			reads, err := t.readBatch(rests)
			if err != nil {
				return err
			}
			var c auditlog.Chains
			for i, k := range keys {
				n++
				if err := t.Delete(k); err != nil {
					return err
				}
				if err := t.linkEntry(&c, rests[i], reads); err != nil {
					return err
				}
				if err := t.v.checkpoints.EveryLines(t.Tx, &c, rests[i]); err != nil {
					return err
				}
			}
			return t.putHeads(&c)
		})
		if errors.Is(err, lease.Lost) {
			v.linkLease().Forget(epoch)
			return nil
		}
		if err != nil || n < chainBatch {
			return err
		}
	}
}

// linkEntry links the line the chain queue entry <nanos>/<tid>/<id>
// names, in t, from what the transaction read ahead (chain_linker_reads.go)
// or, past it, reading the line and its link itself.
func (t *txn) linkEntry(c *auditlog.Chains, rest string, reads *batchReads) error {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return nil
	}
	tid, suffix := parts[1], parts[0]+"/"+parts[2]
	var rec auditlog.LineRecord
	var ok bool
	var err error
	if sv, known := reads.line(tid, suffix); known {
		if ok = sv != nil; ok {
			err = t.OpenRecord(sv.Key, sv.Raw, &rec)
		}
	} else {
		ok, err = t.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
	}
	if err == nil && ok && rec.Link == nil {
		if linked, known := reads.linked(tid, suffix); !known {
			err = auditlog.WithLink(t.Tx, tid, suffix, &rec)
		} else if linked {
			rec.Link = &auditlog.Link{} // linked already: what matters is that it is
		}
	}
	if errors.Is(err, errTenantGone) || (err == nil && (!ok || rec.Link != nil)) {
		return nil // deleted with its tenant, removed, or chained already
	}
	if errors.Is(err, seal.ErrOpen) || errors.Is(err, unit.ErrRecord) {
		// Altered in the store: linking it would vouch for it, and
		// failing would stop the linker for good. Left off the chain,
		// where a verification reports it (Inserted).
		t.v.logger.Warn("tokenvault: a queued audit line does not open; left off the chain", "tenant_id", tid, "line", suffix)
		return nil
	}
	if err != nil {
		return err
	}
	return c.Link(t.Tx, tid, suffix, &rec)
}

// runChainer is the linker goroutine: every chainInterval until Close it
// folds what reads appended, takes or renews the linker lease, links the
// queue while it holds it, and measures the backlog; at Close it releases
// the lease.
func (v *Vault) runChainer() {
	ctx := v.bg
	l := v.linkLease()
	defer l.ReleaseOnClose(v.logger)
	seen, first := uint64(0), true
	var measured time.Time
	tick := time.NewTicker(chainInterval)
	defer tick.Stop()
	for {
		if n := v.chainer.appended.Load(); first || n != seen {
			if err := v.foldAppends(ctx); err == nil {
				first, seen = false, n
			}
		}
		if err := v.linkTick(ctx, l); err != nil && ctx.Err() == nil {
			v.logger.Error("tokenvault: linking audit lines failed", "err", err)
		}
		if now := time.Now(); now.Sub(measured) >= backlogEvery {
			measured = now
			if err := v.measureBacklog(ctx); err != nil && ctx.Err() == nil {
				v.logger.Warn("tokenvault: measuring the audit chain backlog failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// linkTick is one turn of the linker: hold the lease, then link.
func (v *Vault) linkTick(ctx context.Context, l *lease.Lease) error {
	epoch, ok, err := l.Hold(ctx)
	if err != nil || !ok {
		return err
	}
	return v.linkQueued(ctx, epoch)
}

// measureBacklog counts the queued lines (up to backlogCap) and reads
// the oldest one's time, for Stats.
func (v *Vault) measureBacklog(ctx context.Context) error {
	var n, oldest int64
	err := v.view(ctx, func(t *txn) error {
		n, oldest = 0, 0
		return t.Scan(barrier.ChainQueue, "", backlogCap, func(_ barrier.Key, rest string) error {
			if n == 0 {
				nanos, _, _ := strings.Cut(rest, "/")
				if u, err := strconv.ParseUint(nanos, 16, 64); err == nil {
					oldest = int64(u)
				}
			}
			n++
			if n >= backlogCap {
				return store.ErrStop
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	v.chainer.unlinked.Store(n)
	v.chainer.oldest.Store(oldest)
	return nil
}

// AuditChainStats is the audit chain's backlog, for Stats: the lines
// committed and not linked yet, of every tenant, as the linker last
// measured them (every second, on every instance).
type AuditChainStats struct {
	// Unlinked is how many lines are queued and not linked, counted up
	// to 5,000 (a larger backlog reads as 5,000).
	Unlinked int
	// OldestAge is how long ago the oldest of them was written (on the
	// Vault's clock); 0 when there is none.
	OldestAge time.Duration
	// Linking is whether this instance holds the linker lease.
	Linking bool
}

// chainStats is the backlog as last measured.
func (v *Vault) chainStats() AuditChainStats {
	s := AuditChainStats{Unlinked: int(v.chainer.unlinked.Load()), Linking: v.linkLease().Held() != 0}
	if o := v.chainer.oldest.Load(); o > 0 && s.Unlinked > 0 {
		if now := barrier.UnixNanos(v.now()); now > o {
			s.OldestAge = time.Duration(now - o)
		}
	}
	return s
}
