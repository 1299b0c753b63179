package tokenvault

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// The log index's tail.
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
// So on a store one process holds, the entry of a read's line is written
// later by an indexer, for many lines at once. (Other lines are about an
// entity just written, mostly new, whose time-ordered id puts its entries
// at the end of the index: deferring them measured slower, 15.7k against
// 14.9k tokenizations a second.) Each tenant with such lines has a
// marker, tenant/<tid>/logtail, holding the key suffix of the last line
// indexed (or "<nanos>/", before every line of that nanosecond, when the
// first line was left): the lines after it are the tail, and may lack
// their entries. Entity and type queries (ListLogs) read the index, then
// decode every line of the tail and keep those that match. The indexer
// (runLogIndexer) indexes a tenant's tail up to logIndexHorizon ago, at
// most logIndexBatch lines a transaction, and moves the marker past them
// in the same transaction; so the tail holds about a quarter of a second
// of lines while lines are written, and none soon after.
//
// Why nothing is lost: a read's line is written without its entry only
// when its suffix sorts after the marker read in the same transaction. The indexer
// moves the marker in a transaction too, so the two serialize: a line
// written by a transaction that read the marker before the indexer moved
// it is re-checked (an optimistic first run, optimistic.go) or runs after
// it (the store's serialization), then sorts before the new marker and is
// written with its entry. So every line is indexed or in the tail, whatever
// the clock does: a line stamped before the marker is indexed at once.
//
// Stores several processes share (PostgreSQL) write every line with its
// entry, as before; the indexer runs there too, for the tail of a store
// copied from bbolt (a backup restored), and finds nothing otherwise. A
// store written before the marker existed has every line indexed and no
// marker, and gets one with the first line left to the indexer.

const (
	// logIndexInterval is how often the indexer looks for tails.
	logIndexInterval = 250 * time.Millisecond
	// logIndexHorizon is how old a line must be to be indexed: younger
	// lines are still being appended to, and a first run that read where
	// lines are appended would be voided by every commit (optimistic.go).
	logIndexHorizon = 100 * time.Millisecond
	// logIndexBatch is the most lines one indexing transaction takes.
	logIndexBatch = 2000
)

// logTailRead is a transaction's read of one tenant's tail marker, kept
// so that a batch of lines reads it once.
type logTailRead struct {
	tenant, marker string
	exists         bool
}

// logTail returns tenant tid's tail marker; false when it has none, and so
// no tail.
func (t *txn) logTail(tid string) (string, bool, error) {
	if t.tail.tenant != tid || tid == "" {
		b, err := t.getMarker(logTailKey(tid))
		if err != nil {
			return "", false, err
		}
		t.tail = logTailRead{tenant: tid, marker: string(b), exists: b != nil}
	}
	return t.tail.marker, t.tail.exists, nil
}

// setLogTail moves tenant tid's tail marker to marker.
func (t *txn) setLogTail(tid, marker string) error {
	if err := t.putMarker(logTailKey(tid), []byte(marker)); err != nil {
		return err
	}
	t.tail = logTailRead{tenant: tid, marker: marker, exists: true}
	return nil
}

// indexLater reports whether the line at log/<suffix> of tenant tid,
// recording operation op, is left to the indexer instead of being indexed
// now: on a store one process holds, a read whose line sorts after the
// tenant's tail marker (which a tenant without one gets now).
func (t *txn) indexLater(tid, op, suffix string) (bool, error) {
	slash := strings.IndexByte(suffix, '/')
	if !t.v.optimistic || op != OpRead || slash < 0 {
		return false, nil
	}
	marker, ok, err := t.logTail(tid)
	if err != nil {
		return false, err
	}
	if !ok {
		marker = suffix[:slash+1]
		if err := t.setLogTail(tid, marker); err != nil {
			return false, err
		}
	}
	if suffix <= marker {
		return false, nil
	}
	t.v.logTails.mark(tid)
	return true, nil
}

// tailLines returns the suffixes of the lines in tenant tid's tail about
// entities of type typ (and id, unless it is "") created in [start, end),
// in key order.
func (t *txn) tailLines(tid, typ, id string, start, end *time.Time) ([]string, error) {
	marker, ok, err := t.logTail(tid)
	if err != nil || !ok {
		return nil, err
	}
	lines, err := t.scanValuesAfter(logPrefix(tid), marker, 0)
	if err != nil {
		return nil, err
	}
	var from, to string
	if start != nil {
		from = timeKey(*start)
	}
	if end != nil {
		to = timeKey(*end)
	}
	var out []string
	for _, sv := range lines {
		if sv.rest < from || to != "" && sv.rest >= to {
			continue
		}
		var l logRecord
		if err := t.openRecord(sv.key, sv.raw, &l); err != nil {
			return nil, err
		}
		if l.EntityType == typ && (id == "" || l.EntityID == id) {
			out = append(out, sv.rest)
		}
	}
	return out, nil
}

// logTails is the set of tenants whose tails the indexer should look at.
type logTails struct {
	tenants sync.Map
	// pass is held by a pass of the indexer (indexLogTails), so that
	// passes do not take each other's tenants halfway.
	pass sync.Mutex
}

func (x *logTails) mark(tid string) {
	if _, ok := x.tenants.Load(tid); !ok {
		x.tenants.Store(tid, struct{}{})
	}
}

// take returns the marked tenants and unmarks them.
func (x *logTails) take() []string {
	var out []string
	x.tenants.Range(func(k, _ any) bool {
		x.tenants.Delete(k)
		out = append(out, k.(string))
		return true
	})
	return out
}

// runLogIndexer indexes tails until the Vault closes: first those of
// every tenant with a marker (what the last process left), then those of
// the tenants that left lines to it since.
func (v *Vault) runLogIndexer() {
	ctx := v.bg
	err := v.view(ctx, func(t *txn) error {
		var tenants []string
		err := t.scanKeys(tenantRegistry, func(_ storeKey, tid string) error {
			tenants = append(tenants, tid)
			return nil
		})
		for _, tid := range tenants {
			ok, err := t.has(logTailKey(tid))
			if err != nil {
				return err
			}
			if ok {
				v.logTails.mark(tid)
			}
		}
		return err
	})
	tick := time.NewTicker(logIndexInterval)
	defer tick.Stop()
	for {
		if err == nil {
			_, err = v.indexLogTails(ctx)
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

// indexLogTails indexes the tails of the marked tenants, up to
// logIndexHorizon ago, and returns how many lines it indexed. A tenant
// that fails, or has younger lines left, stays marked.
func (v *Vault) indexLogTails(ctx context.Context) (int, error) {
	v.logTails.pass.Lock()
	defer v.logTails.pass.Unlock()
	total := 0
	var errs []error
	for _, tid := range v.logTails.take() {
		for {
			n, full, younger, err := v.indexLogTail(ctx, tid, v.now().Add(-logIndexHorizon), logIndexBatch)
			total += n
			if err != nil {
				errs = append(errs, err)
				v.logTails.mark(tid)
				break
			}
			if younger {
				v.logTails.mark(tid)
			}
			if !full {
				break
			}
		}
	}
	return total, errors.Join(errs...)
}

// indexLogTail writes the index entries of up to limit lines of tenant
// tid's tail created before horizon, and moves its marker past them, in
// one transaction. full reports that it stopped at limit; younger that it
// stopped at a line created at or after horizon.
func (v *Vault) indexLogTail(ctx context.Context, tid string, horizon time.Time, limit int) (n int, full, younger bool, err error) {
	// pending returns the lines to index.
	pending := func(t *txn) ([]storedValue, error) {
		full, younger = false, false
		if deleting, err := t.tenantDeleting(tid); err != nil || deleting {
			return nil, err // a tenant being deleted loses its lines anyway
		}
		marker, ok, err := t.logTail(tid)
		if err != nil || !ok {
			return nil, err
		}
		lines, reached, err := t.scanValuesBefore(logPrefix(tid), marker, timeKey(horizon), limit)
		full, younger = len(lines) == limit, reached
		return lines, err
	}
	// Most looks find nothing to index: they take no write transaction
	// (on bbolt, a commit and its fsyncs even when nothing is written).
	err = v.view(ctx, func(t *txn) error {
		lines, err := pending(t)
		n = len(lines)
		return err
	})
	if err != nil || n == 0 {
		return 0, full, younger, err
	}
	err = v.updateOptimistic(ctx, func(t *txn) error {
		lines, err := pending(t)
		n = 0
		if err != nil {
			return err
		}
		for _, sv := range lines {
			var l logRecord
			if err := t.openRecord(sv.key, sv.raw, &l); err != nil {
				return err
			}
			if l.Operation != OpRead {
				continue // indexed with its write: only reads are left
			}
			if err := t.putIndex(lineIndexKey(tid, l.EntityType, l.EntityID, sv.rest)); err != nil {
				return err
			}
		}
		if n = len(lines); n == 0 {
			return nil
		}
		return t.setLogTail(tid, lines[n-1].rest)
	})
	return n, full, younger, err
}
