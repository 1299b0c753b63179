package auditlog

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
	"github.com/tokenvault/tokenvault/store"
)

// logWork is a unit of work (worktest) whose audit lines are written as
// the Vault writes them (Writer): each line with its chain queue entry and
// its entity index entry, or for a read, as on a store one process holds,
// its pending entry, which the indexer (IndexPending) turns into an index
// entry. The pages' tests write a tenant's log with it, line by line, on
// a clock they move.
type logWork struct {
	*worktest.Work
	tid     string
	indexer *Indexer
}

// newLogWork is a logWork with one tenant, whose first lines are those of
// its creation: the tenant, its owner and two applications.
func newLogWork(t *testing.T) *logWork {
	t.Helper()
	w := &logWork{Work: worktest.New(t), tid: "0196a1b2-c3d4-7000-8000-000000000001"}
	w.Tenant(t, w.tid)
	w.indexer = NewIndexer(IndexerConfig{Work: w.Work.Work, Later: true, Now: w.Now,
		Fold:   func(context.Context) error { return nil },
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	w.WriteLinesWith(&Writer{IDs: &unit.IDSource{}, Indexer: w.indexer, Exporter: NewExporter(ExportConfig{})})
	w.log(t, unit.EntityTenant, w.tid, unit.OpCreate)
	w.log(t, "user", "0196a1b2-c3d4-7000-8000-000000000002", unit.OpCreate)
	w.log(t, unit.EntityApplication, "0196a1b2-c3d4-7000-8000-000000000003", unit.OpCreate)
	w.log(t, unit.EntityApplication, "0196a1b2-c3d4-7000-8000-000000000004", unit.OpCreate)
	return w
}

// log writes one line, op on the entity typ/id, in a unit of work of its
// own, as a call of the Vault would.
func (w *logWork) log(t *testing.T, typ, id, op string) {
	t.Helper()
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		return tx.Log(unit.Actor{ID: "0196a1b2-c3d4-7000-8000-000000000004", Type: "application"}, w.tid, typ, id, op, "test line")
	})
	if err != nil {
		t.Fatal(err)
	}
}

// indexPending runs one pass of the indexer, as its timer would.
func (w *logWork) indexPending(t *testing.T) {
	t.Helper()
	if _, err := w.indexer.IndexPending(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// countKeys counts the keys under prefix.
func (w *logWork) countKeys(t *testing.T, prefix barrier.Prefix) int {
	t.Helper()
	n := 0
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		return tx.ScanKeys(prefix, func(barrier.Key, string) error { n++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// toLegacy moves the index entries of the lines at suffixes, about the
// entity typ/id, to the legacy entity index, as a store of the old layout
// has them.
func (w *logWork) toLegacy(t *testing.T, typ, id string, suffixes []string) {
	t.Helper()
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		for _, s := range suffixes {
			if err := tx.Delete(IndexKey(w.tid, typ, id, s)); err != nil {
				return err
			}
			if err := tx.PutIndex(barrier.Tenant(w.tid).LogEntityIndex(typ, id).Key(s)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// logRange returns the suffixes (<nanos>/<id>) of the keys under prefix
// created in [start, end), oldest first: the whole list LogPage's pages
// are cut from.
func logRange(t *unit.Tx, prefix barrier.Prefix, start, end *time.Time) ([]string, error) {
	after, before := RangeBounds(start, end)
	var suffixes []string
	err := t.Scan(prefix, after, 0, func(_ barrier.Key, rest string) error {
		if before != "" && rest >= before {
			return store.ErrStop
		}
		suffixes = append(suffixes, rest)
		return nil
	})
	return suffixes, err
}
