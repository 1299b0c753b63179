package tokenvault

import (
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/paging"
)

// The lines of one entity type (ListLogs with entity_type alone): walked
// by auditlog.WalkType, which says how.

// typePage returns page pg of tenant tid's lines about entities of type
// typ created in [start, end), newest first, with its pagination,
// examining at most the page's offset, its size and budget more lines,
// and answering from the type's index when the walk's first chunk holds
// none of the type, or the budget runs out, and the type has at most few
// lines (ListLogs: paging.ListBudget, both). The total is
// the same lower bound as logPage's (the lines of the type up to the end
// of the page, plus one when After is set), exact when After is empty or
// when the page was answered from the type's index.
func (t *txn) typePage(tid, typ string, start, end *time.Time, pg paging.Pager, budget, few int) ([]Log, Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, Pagination{}, err
	}
	after, before := logPageBounds(start, end, pg)
	w, err := auditlog.WalkType(t.Tx, tid, typ, start, end, after, before, skip, pg.Size, budget, few)
	if err != nil {
		return nil, Pagination{}, err
	}
	if w.FromIndex {
		return t.typePageOf(tid, w.Suffixes, pg)
	}
	data := make([]Log, 0, len(w.Lines))
	for i := range w.Lines {
		data = append(data, logOf(w.Keys[i], &w.Lines[i]))
	}
	total := w.Skipped + len(data)
	var cursor string
	if w.More && w.Last != "" {
		cursor = paging.EncodeCursor(w.Last)
		total++
	}
	p := paging.Pages(total, pageNumber, pg.Size)
	p.After = cursor
	return data, p, nil
}

// typePageOf returns page pg of the lines at suffixes (oldest first: all
// those of a type, in a range), newest first, counted exactly.
func (t *txn) typePageOf(tid string, suffixes []string, pg paging.Pager) ([]Log, Pagination, error) {
	slices.Reverse(suffixes)
	lo, hi, p := pg.Window(len(suffixes), func(i int) string { return suffixes[i] }, true)
	data := make([]Log, 0, hi-lo)
	for _, s := range suffixes[lo:hi] {
		l, ok, err := t.getLog(tid, s)
		if err != nil {
			return nil, Pagination{}, err
		}
		if ok {
			data = append(data, l)
		}
	}
	return data, p, nil
}
