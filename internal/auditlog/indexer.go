package auditlog

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The entity index of reads, written in batches.
//
// Every audit line has one entity index entry (idx/log-e, keys.go), keyed
// by the entity's type and id, for GET /logs?entity_type=&entity_id=. The
// line itself appends at the end of its tenant's log, but its index entry
// lands among its entity's entries: the line recording a read of one token
// among many is a B-tree insert at a random leaf, and a commit of twenty
// reads rewrote some twenty leaves for their index entries alone. (Leaving
// the entries of reads out served GET /tokens/{id} at 17.5k instead of
// 14.1k req/s at 64 connections; BENCHMARKS.md.)
//
// So on a store one process holds, a read's line is written with a
// pending entry instead, idx/log-p/<nanos>/<id>/<type>/<entity>: in time
// order, so it appends beside the line, and naming what the final entry
// will be. The Indexer turns the pending entries older than IndexHorizon
// into index entries, at most indexBatch a transaction, deleting them in
// the same transaction: a line always has one of the two, whatever the
// clock does. Entity and type queries (the root's ListLogs) read the
// index and the pending entries, which are few: about a quarter of a
// second of reads while reads go on, none soon after. Other lines are
// about an entity just written, mostly new, whose time-ordered id puts its
// entries at the end of the index already; they are indexed with their
// write.
//
// A store that appends (store.Appender, bbolt; the root's appends.go)
// takes a read's index entry with its line, and writes both when it folds
// them, many reads in one sorted transaction: what the indexer batches
// for, without the pending entry and its deletion. So there, too, a
// read's line is indexed with its write. Stores several processes share
// (PostgreSQL) index every line with its write. The indexer runs on every
// store, for the pending entries an earlier version left (or a backup
// restored), and finds nothing otherwise.

const (
	// indexInterval is how often the indexer looks for pending entries.
	indexInterval = 250 * time.Millisecond
	// IndexHorizon is how old a pending entry must be to be indexed:
	// younger ones are still being appended to, and a first run that
	// read where entries are appended would be voided by every commit
	// (unit.Work.UpdateOptimistic).
	IndexHorizon = 100 * time.Millisecond
	// indexBatch is the most entries one indexing transaction takes.
	indexBatch = 2000
)

// IndexerConfig is what an Indexer needs of the Vault.
type IndexerConfig struct {
	// Work runs the indexing transactions.
	Work *unit.Work
	// Later is whether reads' lines get pending entries (Indexer.Later):
	// on a store one process holds (optimistic first runs) that does not
	// append.
	Later bool
	// Fold makes what the store took as appends visible (the root's
	// foldAppends).
	Fold func(context.Context) error
	// Logger takes what goes wrong in the background.
	Logger *slog.Logger
	// Now is the Vault's clock.
	Now func() time.Time
}

// Indexer is the log indexer of one Vault: it turns pending entries into
// entity index entries.
type Indexer struct {
	cfg IndexerConfig
	// tenants is the set of tenants whose pending entries the indexer
	// should look at.
	tenants sync.Map
	// pass is held by a pass of the indexer (IndexPending), so that
	// passes do not take each other's tenants halfway.
	pass sync.Mutex
	// wrote are the tenants a transaction wrote pending entries for; the
	// indexer is told once they are committed. After the commit: a pass
	// between the mark and the commit would find nothing, and unmark the
	// tenant for good. On a failed commit too, since a backend may fail
	// after writing; a pass that finds nothing costs a scan.
	wrote unit.Local[[]string]
}

// NewIndexer is the indexer of cfg; Run runs it.
func NewIndexer(cfg IndexerConfig) *Indexer {
	x := &Indexer{cfg: cfg}
	x.wrote.Finish = func(_ *unit.Tx, tids *[]string, _ bool) {
		for _, tid := range *tids {
			x.mark(tid)
		}
	}
	return x
}

// Later writes, in t, instead of the index entry of the line at
// log/<suffix> of tenant tid (about entity typ/id, recording operation
// op), its pending entry, and reports whether it did: for reads, when
// IndexerConfig.Later.
func (x *Indexer) Later(t *unit.Tx, tid, typ, id, op, suffix string) (bool, error) {
	if !x.cfg.Later || op != unit.OpRead || len(suffix) != SuffixLen || typ == "" || strings.Contains(typ, "/") {
		return false, nil
	}
	if err := t.AppendIndex(barrier.Tenant(tid).PendingLogIndex().Key(suffix + "/" + typ + "/" + id)); err != nil {
		return false, err
	}
	if p := x.wrote.Of(t); !slices.Contains(*p, tid) {
		*p = append(*p, tid)
	}
	return true, nil
}

func (x *Indexer) mark(tid string) {
	if _, ok := x.tenants.Load(tid); !ok {
		x.tenants.Store(tid, struct{}{})
	}
}

// take returns the marked tenants and unmarks them.
func (x *Indexer) take() []string {
	var out []string
	x.tenants.Range(func(k, _ any) bool {
		x.tenants.Delete(k)
		out = append(out, k.(string))
		return true
	})
	return out
}

// Run indexes pending entries until ctx is done: first those of every
// tenant that has some (what the last process left), then those of the
// tenants that wrote some since.
func (x *Indexer) Run(ctx context.Context) {
	// What an earlier Vault on this store appended is in it first.
	err := x.cfg.Fold(ctx)
	if err == nil {
		err = x.cfg.Work.View(ctx, func(t *unit.Tx) error {
			var tenants []string
			err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
				tenants = append(tenants, tid)
				return nil
			})
			for _, tid := range tenants {
				if err != nil {
					break
				}
				err = t.Scan(barrier.Tenant(tid).PendingLogIndex(), "", 1, func(barrier.Key, string) error {
					x.mark(tid)
					return nil
				})
			}
			return err
		})
	}
	tick := time.NewTicker(indexInterval)
	defer tick.Stop()
	for {
		if err == nil {
			_, err = x.IndexPending(ctx)
		}
		if err != nil && ctx.Err() == nil {
			x.cfg.Logger.Error("tokenvault: indexing audit lines failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			err = nil
		}
	}
}

// IndexPending indexes the pending entries of the marked tenants, up to
// IndexHorizon ago, and returns how many it indexed: one pass of Run. A
// tenant that fails, or has younger entries left, stays marked. Returns
// the store's errors.
func (x *Indexer) IndexPending(ctx context.Context) (int, error) {
	x.pass.Lock()
	defer x.pass.Unlock()
	total := 0
	var errs []error
	tenants := x.take()
	if len(tenants) == 0 {
		return 0, nil
	}
	// After the take: a tenant is marked once its entries are appended,
	// so those of every tenant taken are folded.
	if err := x.cfg.Fold(ctx); err != nil {
		for _, tid := range tenants {
			x.mark(tid)
		}
		return 0, err
	}
	for _, tid := range tenants {
		for {
			n, full, younger, err := x.indexPendingOf(ctx, tid, x.cfg.Now().Add(-IndexHorizon), indexBatch)
			total += n
			if err != nil {
				errs = append(errs, err)
				x.mark(tid)
				break
			}
			if younger {
				x.mark(tid)
			}
			if !full {
				break
			}
		}
	}
	return total, errors.Join(errs...)
}

// indexPendingOf turns up to limit of tenant tid's pending entries of lines
// created before horizon into index entries, in one transaction. full
// reports that it stopped at limit; younger that it stopped at a line
// created at or after horizon.
func (x *Indexer) indexPendingOf(ctx context.Context, tid string, horizon time.Time, limit int) (n int, full, younger bool, err error) {
	before := barrier.TimeKey(horizon)
	// pending returns the entries to index, stopping at horizon, so that
	// a first run covers only them.
	pending := func(t *unit.Tx) ([]string, error) {
		full, younger = false, false
		if deleting, err := t.Has(barrier.Tenant(tid).Deleting()); err != nil || deleting {
			return nil, err // a tenant being deleted loses its lines anyway
		}
		var rests []string
		err := t.Scan(barrier.Tenant(tid).PendingLogIndex(), "", limit, func(_ barrier.Key, rest string) error {
			if rest >= before {
				younger = true
				return barrier.ErrStop
			}
			rests = append(rests, rest)
			return nil
		})
		full = len(rests) == limit
		return rests, err
	}
	// Most looks find nothing to index: they take no write transaction
	// (on bbolt, a commit and its fsyncs even when nothing is written).
	err = x.cfg.Work.View(ctx, func(t *unit.Tx) error {
		rests, err := pending(t)
		n = len(rests)
		return err
	})
	if err != nil || n == 0 {
		return 0, full, younger, err
	}
	err = x.cfg.Work.UpdateOptimistic(ctx, func(t *unit.Tx) error {
		rests, err := pending(t)
		n = 0
		if err != nil {
			return err
		}
		p := barrier.Tenant(tid).PendingLogIndex()
		for _, rest := range rests {
			if e, ok := ParsePending(rest); ok {
				if err := t.PutIndex(IndexKey(tid, e.Type, e.ID, e.Suffix)); err != nil {
					return err
				}
			}
			if err := t.Delete(p.Key(rest)); err != nil {
				return err
			}
		}
		n = len(rests)
		return nil
	})
	return n, full, younger, err
}
