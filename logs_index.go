package tokenvault

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The entity index of reads, written in batches.
//
// Every audit line has one entity index entry (idx/log-e, logs.go), keyed
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
// will be. An indexer (runLogIndexer) turns the pending entries older than
// logIndexHorizon into index entries, at most logIndexBatch a transaction,
// deleting them in the same transaction: a line always has one of the two,
// whatever the clock does. Entity and type queries (ListLogs) read the
// index and the pending entries, which are few: about a quarter of a
// second of reads while reads go on, none soon after. Other lines are
// about an entity just written, mostly new, whose time-ordered id puts its
// entries at the end of the index already; they are indexed with their
// write.
//
// A store that appends (store.Appender, bbolt; appends.go) takes a read's
// index entry with its line, and writes both when it folds them, many
// reads in one sorted transaction: what the indexer batches for, without
// the pending entry and its deletion. So there, too, a read's line is
// indexed with its write. Stores several processes share (PostgreSQL)
// index every line with its write. The indexer runs on every store, for
// the pending entries an earlier version left (or a backup restored), and
// finds nothing otherwise.

const (
	// logIndexInterval is how often the indexer looks for pending entries.
	logIndexInterval = 250 * time.Millisecond
	// logIndexHorizon is how old a pending entry must be to be indexed:
	// younger ones are still being appended to, and a first run that
	// read where entries are appended would be voided by every commit
	// (optimistic.go).
	logIndexHorizon = 100 * time.Millisecond
	// logIndexBatch is the most entries one indexing transaction takes.
	logIndexBatch = 2000
)

// indexLater writes, instead of the index entry of the line at
// log/<suffix> of tenant tid (about entity typ/id, recording operation
// op), its pending entry, and reports whether it did: for reads, on a
// store one process holds.
func (t *txn) indexLater(tid, typ, id, op, suffix string) (bool, error) {
	if !t.v.optimistic || t.v.barrier.Appends() || op != OpRead || len(suffix) != auditlog.SuffixLen || typ == "" || strings.Contains(typ, "/") {
		return false, nil
	}
	if err := t.AppendIndex(barrier.Tenant(tid).PendingLogIndex().Key(suffix + "/" + typ + "/" + id)); err != nil {
		return false, err
	}
	if p := pendingOf.of(t); !slices.Contains(*p, tid) {
		*p = append(*p, tid)
	}
	return true, nil
}

// pendingOf are the tenants a transaction wrote pending log index entries
// for; the indexer is told once they are committed. After the commit: an
// indexer pass between the mark and the commit would find nothing, and
// unmark the tenant for good. On a failed commit too, since a backend may
// fail after writing; a pass that finds nothing costs a scan.
var pendingOf = &txnLocal[[]string]{finish: func(t *txn, tids *[]string, _ bool) {
	for _, tid := range *tids {
		t.v.pendingTenants.mark(tid)
	}
}}

// pendingTenants is the set of tenants whose pending entries the indexer should
// look at.
type pendingTenants struct {
	tenants sync.Map
	// pass is held by a pass of the indexer (indexPending), so that
	// passes do not take each other's tenants halfway.
	pass sync.Mutex
}

func (x *pendingTenants) mark(tid string) {
	if _, ok := x.tenants.Load(tid); !ok {
		x.tenants.Store(tid, struct{}{})
	}
}

// take returns the marked tenants and unmarks them.
func (x *pendingTenants) take() []string {
	var out []string
	x.tenants.Range(func(k, _ any) bool {
		x.tenants.Delete(k)
		out = append(out, k.(string))
		return true
	})
	return out
}

// runLogIndexer indexes pending entries until the Vault closes: first
// those of every tenant that has some (what the last process left), then
// those of the tenants that wrote some since.
func (v *Vault) runLogIndexer() {
	ctx := v.bg
	// What an earlier Vault on this store appended is in it first.
	err := v.foldAppends(ctx)
	if err == nil {
		err = v.view(ctx, func(t *txn) error {
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
					v.pendingTenants.mark(tid)
					return nil
				})
			}
			return err
		})
	}
	tick := time.NewTicker(logIndexInterval)
	defer tick.Stop()
	for {
		if err == nil {
			_, err = v.indexPending(ctx)
		}
		if err != nil && ctx.Err() == nil {
			v.logger.Error("tokenvault: indexing audit lines failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			err = nil
		}
	}
}

// indexPending indexes the pending entries of the marked tenants, up to
// logIndexHorizon ago, and returns how many it indexed. A tenant that
// fails, or has younger entries left, stays marked.
func (v *Vault) indexPending(ctx context.Context) (int, error) {
	v.pendingTenants.pass.Lock()
	defer v.pendingTenants.pass.Unlock()
	total := 0
	var errs []error
	tenants := v.pendingTenants.take()
	if len(tenants) == 0 {
		return 0, nil
	}
	// After the take: a tenant is marked once its entries are appended,
	// so those of every tenant taken are folded.
	if err := v.foldAppends(ctx); err != nil {
		for _, tid := range tenants {
			v.pendingTenants.mark(tid)
		}
		return 0, err
	}
	for _, tid := range tenants {
		for {
			n, full, younger, err := v.indexPendingOf(ctx, tid, v.now().Add(-logIndexHorizon), logIndexBatch)
			total += n
			if err != nil {
				errs = append(errs, err)
				v.pendingTenants.mark(tid)
				break
			}
			if younger {
				v.pendingTenants.mark(tid)
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
func (v *Vault) indexPendingOf(ctx context.Context, tid string, horizon time.Time, limit int) (n int, full, younger bool, err error) {
	before := barrier.TimeKey(horizon)
	// pending returns the entries to index, stopping at horizon, so that
	// a first run covers only them.
	pending := func(t *txn) ([]string, error) {
		full, younger = false, false
		if deleting, err := t.tenantDeleting(tid); err != nil || deleting {
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
	err = v.view(ctx, func(t *txn) error {
		rests, err := pending(t)
		n = len(rests)
		return err
	})
	if err != nil || n == 0 {
		return 0, full, younger, err
	}
	err = v.updateOptimistic(ctx, func(t *txn) error {
		rests, err := pending(t)
		n = 0
		if err != nil {
			return err
		}
		p := barrier.Tenant(tid).PendingLogIndex()
		for _, rest := range rests {
			if e, ok := auditlog.ParsePending(rest); ok {
				if err := t.PutIndex(auditlog.IndexKey(tid, e.Type, e.ID, e.Suffix)); err != nil {
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
