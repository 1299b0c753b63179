package auditlog

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Filters no index serves (the root's ListLogs with actor_id, operation
// or outcome). A line's actor and operation are in its sealed record
// only, and no index is kept by them: a filtered page walks the log back
// as a type's page does (WalkType), opening each line it examines and
// keeping those that match, and examines at most its offset, its size
// and the budget more lines (paging.ListBudget, 1,000). Where matching
// lines are rare, a page may be short, even empty, with an after that
// continues the walk: a client follows after until it is absent. Its
// total_items is the same lower bound as a type's page's.

// Filter is what a filtered page keeps: lines matching every non-empty
// field.
type Filter struct {
	EntityType, EntityID string
	ActorID              string
	Operation            string
	// Outcome is unit.OutcomeAllowed or unit.OutcomeDenied (of the line's
	// operation, unit.OutcomeOf).
	Outcome string
}

// Matches reports whether l matches every field of f.
func (f Filter) Matches(l *LineRecord) bool {
	return (f.EntityType == "" || l.EntityType == f.EntityType) &&
		(f.EntityID == "" || l.EntityID == f.EntityID) &&
		(f.ActorID == "" || l.ActorID == f.ActorID) &&
		(f.Operation == "" || l.Operation == f.Operation) &&
		(f.Outcome == "" || unit.OutcomeOf(l.Operation) == f.Outcome)
}

// FilterLogPage returns page pg of tenant tid's lines in [start, end)
// that match f, newest first, walking at most pg's offset, its size and
// budget more lines (see above).
func FilterLogPage(t *unit.Tx, tid string, f Filter, start, end *time.Time, pg paging.Pager, budget int) ([]Log, paging.Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	after, before := pageBounds(start, end, pg)
	w, err := walkMatching(t, tid, f.Matches, nil, after, before, skip, pg.Size, budget)
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	data, p := walkedPage(w, pageNumber, pg.Size)
	return data, p, nil
}
