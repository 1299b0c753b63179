package auditlog

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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
// linker lease (internal/lease) links: every ChainInterval it takes the queue in
// batches of chainBatch lines, each batch one transaction that checks the
// lease first (lease.Check), links the lines, writes the heads and signs
// the checkpoints that are due; the timed checkpoint pass runs on the
// same instance (Checkpointer.SignOld). The others only watch the backlog (for
// Stats) and take the lease when it is released or expires.
//
// How soon a line is linked: under normal load within ChainInterval (a
// quarter of a second) of its commit, plus the time to link what was
// queued before it (a batch of 500 lines is one transaction); when the
// holder's process dies, within the lease's time (AuditChainOptions.
// LinkerLease, 10 s by default) plus ChainInterval, by the next holder;
// after a clean Close, at once, by whichever instance looks next. Until
// then the line is committed, listed, and exported once linked (an audit
// export waits for its link), and a verification reports it apart
// (auditchain.Report.Unlinked).
//
// Operations that need the chain to be current (verifying, exporting,
// signing a checkpoint on demand, retention) link first if this instance
// holds the lease or can take it (LinkNow), and otherwise leave the lines
// to the holder: they never wait for a lease another instance holds.
// Listing and reading logs needs no link at all.

// chainBatch bounds the queued lines one linking transaction links.
const chainBatch = 500

// ChainInterval is how often the linker looks for queued lines.
const ChainInterval = 250 * time.Millisecond

// backlogCap bounds the queue entries a backlog measure counts.
const backlogCap = 10 * chainBatch

// backlogEvery is how often the backlog is measured.
const backlogEvery = time.Second

// LinkerConfig is what a Linker needs of the Vault.
type LinkerConfig struct {
	// Work runs the linking transactions.
	Work *unit.Work
	// Lease is the linker lease of this instance, and Instance its id.
	Lease    *lease.Lease
	Instance string
	// Checkpoints signs the checkpoints due as heads move.
	Checkpoints *Checkpointer
	// Fold makes what the store took as appends visible (the root's
	// foldAppends).
	Fold func(context.Context) error
	// TenantGone is the error a read of a deleted tenant's records
	// returns.
	TenantGone error
	// Logger takes what goes wrong in the background.
	Logger *slog.Logger
	// Now is the Vault's clock.
	Now func() time.Time
}

// Linker is the state of the linker of one Vault.
type Linker struct {
	cfg LinkerConfig
	// appended counts the calls whose lines a store took as appends:
	// the linker folds them in before it looks at the queue.
	appended atomic.Uint64

	// unlinked is the backlog as last measured (at most backlogCap), and
	// oldest the time (Unix nanoseconds) of its oldest line, 0 if none.
	unlinked atomic.Int64
	oldest   atomic.Int64
}

// NewLinker is the linker of cfg; Run runs it.
func NewLinker(cfg LinkerConfig) *Linker { return &Linker{cfg: cfg} }

// Lease is the linker lease.
func (l *Linker) Lease() *lease.Lease { return l.cfg.Lease }

// Appended is told that a unit's lines were appended to the store's
// append log (unit.Hooks.Appended): the linker folds them in next.
func (l *Linker) Appended() { l.appended.Add(1) }

// AppendedCalls is how many units' lines were appended so far.
func (l *Linker) AppendedCalls() uint64 { return l.appended.Load() }

// LinkNow folds the store's appends and links every queued line, if this
// instance holds the linker lease or can take it; otherwise it returns at
// once, the lines left to the holder. Returns the store's errors.
func (l *Linker) LinkNow(ctx context.Context) error {
	if err := l.cfg.Fold(ctx); err != nil {
		return err
	}
	epoch, ok, err := l.cfg.Lease.Hold(ctx)
	if err != nil || !ok {
		return err
	}
	return l.LinkQueued(ctx, epoch)
}

// LinkQueued links every line the chain queue holds, in transactions of
// at most chainBatch lines, each of which links only while this instance
// holds the linker lease in epoch: on losing it, it stops and returns
// nil (the new holder goes on). A line whose tenant is gone, or which is
// gone, loses its entry and nothing else.
func (l *Linker) LinkQueued(ctx context.Context, epoch uint64) error {
	for first := true; ; first = false {
		if !first {
			// A long backlog outlasts a lease: renewed between batches
			// (hold writes only when due).
			if e, ok, err := l.cfg.Lease.Hold(ctx); err != nil || !ok || e != epoch {
				return err
			}
		}
		var n int
		if err := l.cfg.Work.View(ctx, func(t *unit.Tx) error {
			n = 0
			return t.Scan(barrier.ChainQueue, "", 1, func(barrier.Key, string) error {
				n++
				return nil
			})
		}); err != nil || n == 0 {
			return err
		}
		err := l.cfg.Work.Update(store.WithOwnTransaction(ctx), func(t *unit.Tx) error {
			n = 0
			if err := lease.Check(t, l.cfg.Lease.Name(), l.cfg.Instance, epoch); err != nil {
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
			reads, err := readBatch(t, rests)
			if err != nil {
				return err
			}
			var c Chains
			for i, k := range keys {
				n++
				if err := t.Delete(k); err != nil {
					return err
				}
				if err := l.linkEntry(t, &c, rests[i], reads); err != nil {
					return err
				}
				if err := l.cfg.Checkpoints.EveryLines(t, &c, rests[i]); err != nil {
					return err
				}
			}
			return l.putHeads(t, &c)
		})
		if errors.Is(err, lease.Lost) {
			l.cfg.Lease.Forget(epoch)
			return nil
		}
		if err != nil || n < chainBatch {
			return err
		}
	}
}

// linkEntry links the line the chain queue entry <nanos>/<tid>/<id>
// names, in t, from what the transaction read ahead (linker_reads.go)
// or, past it, reading the line and its link itself.
func (l *Linker) linkEntry(t *unit.Tx, c *Chains, rest string, reads *batchReads) error {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return nil
	}
	tid, suffix := parts[1], parts[0]+"/"+parts[2]
	var rec LineRecord
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
			err = WithLink(t, tid, suffix, &rec)
		} else if linked {
			rec.Link = &Link{} // linked already: what matters is that it is
		}
	}
	if errors.Is(err, l.cfg.TenantGone) || (err == nil && (!ok || rec.Link != nil)) {
		return nil // deleted with its tenant, removed, or chained already
	}
	if errors.Is(err, seal.ErrOpen) || errors.Is(err, unit.ErrRecord) {
		// Altered in the store: linking it would vouch for it, and
		// failing would stop the linker for good. Left off the chain,
		// where a verification reports it (Inserted).
		l.cfg.Logger.Warn("tokenvault: a queued audit line does not open; left off the chain", "tenant_id", tid, "line", suffix)
		return nil
	}
	if err != nil {
		return err
	}
	return c.Link(t, tid, suffix, &rec)
}

// Run is the linker goroutine: every ChainInterval until ctx ends (the
// Vault's Close) it
// folds what reads appended, takes or renews the linker lease, links the
// queue while it holds it, and measures the backlog; at Close it releases
// the lease.
func (l *Linker) Run(ctx context.Context) {
	defer l.cfg.Lease.ReleaseOnClose(l.cfg.Logger)
	seen, first := uint64(0), true
	var measured time.Time
	tick := time.NewTicker(ChainInterval)
	defer tick.Stop()
	for {
		if n := l.appended.Load(); first || n != seen {
			if err := l.cfg.Fold(ctx); err == nil {
				first, seen = false, n
			}
		}
		if err := l.linkTick(ctx); err != nil && ctx.Err() == nil {
			l.cfg.Logger.Error("tokenvault: linking audit lines failed", "err", err)
		}
		if now := time.Now(); now.Sub(measured) >= backlogEvery {
			measured = now
			if err := l.measureBacklog(ctx); err != nil && ctx.Err() == nil {
				l.cfg.Logger.Warn("tokenvault: measuring the audit chain backlog failed", "err", err)
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
func (l *Linker) linkTick(ctx context.Context) error {
	epoch, ok, err := l.cfg.Lease.Hold(ctx)
	if err != nil || !ok {
		return err
	}
	return l.LinkQueued(ctx, epoch)
}

// measureBacklog counts the queued lines (up to backlogCap) and reads
// the oldest one's time, for Stats.
func (l *Linker) measureBacklog(ctx context.Context) error {
	var n, oldest int64
	err := l.cfg.Work.View(ctx, func(t *unit.Tx) error {
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
	l.unlinked.Store(n)
	l.oldest.Store(oldest)
	return nil
}

// Backlog is the backlog as last measured: how many lines are queued and
// not linked (up to 5,000), the time (Unix nanoseconds) of the oldest (0
// if none), and whether this instance holds the linker lease.
func (l *Linker) Backlog() (unlinked int, oldest int64, linking bool) {
	return int(l.unlinked.Load()), l.oldest.Load(), l.cfg.Lease.Held() != 0
}

// BacklogAge is how long before now the oldest line of the backlog was
// written, from Backlog's oldest; 0 when there is none, or when the clock
// reads earlier than it.
func BacklogAge(unlinked int, oldest int64, now time.Time) time.Duration {
	if oldest <= 0 || unlinked == 0 {
		return 0
	}
	if n := barrier.UnixNanos(now); n > oldest {
		return time.Duration(n - oldest)
	}
	return 0
}

// putHeads writes the heads c moved, each signed first when a checkpoint
// is due (Checkpointer.Due).
func (l *Linker) putHeads(t *unit.Tx, c *Chains) error {
	for _, tid := range c.Tenants() {
		s := c.Of(tid)
		if !s.Moved {
			continue
		}
		if err := l.cfg.Checkpoints.Due(t, tid, s); err != nil {
			return err
		}
		if err := t.PutRecord(barrier.Tenant(tid).ChainHead(), s.Head); err != nil {
			return err
		}
	}
	return nil
}
