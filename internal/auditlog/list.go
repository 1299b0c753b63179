package auditlog

import (
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The pages of ListLogs: the lines of a tenant newest first, of one
// entity type, or of one entity, each reading only its page (see LogPage,
// TypePage, EntityPage), and the line as the API shows it (Log).

// Log is one line of a tenant's audit trail. Messages never hold sensitive
// values: no token data, no keys.
type Log struct {
	ID         string `json:"id"`
	TenantID   string `json:"tenant_id"`
	ActorID    string `json:"actor_id,omitempty"`
	ActorType  string `json:"actor_type,omitempty"`
	EntityType string `json:"entity_type"`
	EntityID   string `json:"entity_id"`
	Operation  string `json:"operation"`
	// Outcome is "denied" on a denied call's line (operation "denied"),
	// "allowed" on every other (unit.OutcomeOf).
	Outcome   string    `json:"outcome"`
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}

// EntityType names a kind of entity that logs refer to.
type EntityType struct {
	DisplayName string `json:"display_name"`
	Value       string `json:"value"`
}

var entityTypes = []EntityType{
	{"Application", unit.EntityApplication},
	{"Bank", unit.EntityBank},
	{"Card", unit.EntityCard},
	{"Format-Preserving Encryption", unit.EntityFPE},
	{"Proxy", unit.EntityProxy},
	{"Reactor", unit.EntityReactor},
	{"Reactor Formula", unit.EntityReactorFormula},
	{"Session", unit.EntitySession},
	{"Tenant", unit.EntityTenant},
	{"Tenant Member", unit.EntityTenantMember},
	{"Tenant Invitation", unit.EntityTenantInvitation},
	{"Token", unit.EntityToken},
	{"Token Intent", unit.EntityTokenIntent},
	{"Webhook", unit.EntityWebhook},
	{"Approval", unit.EntityApproval},
	{"Export", unit.EntityExport},
}

// LogOf is the line l stored at key as ListLogs returns it.
func LogOf(key barrier.Key, l *LineRecord) Log {
	return Log{ID: unit.KeyID(key.String()), TenantID: key.Tenant(), ActorID: l.ActorID, ActorType: l.ActorType,
		EntityType: l.EntityType, EntityID: l.EntityID, Operation: l.Operation, Outcome: unit.OutcomeOf(l.Operation),
		Message: l.Message, CreatedAt: l.CreatedAt}
}

// GetLog reads the line stored at log/<suffix>; false when there is none.
func GetLog(t *unit.Tx, tid, suffix string) (Log, bool, error) {
	key := barrier.Tenant(tid).Logs().Key(suffix)
	var l LineRecord
	ok, err := t.GetRecord(key, &l)
	if err != nil || !ok {
		return Log{}, false, err
	}
	return LogOf(key, &l), true, nil
}

// pageBounds returns the bounds of the suffixes of the lines a newest-
// first page pg of [start, end) may hold: logRangeBounds, with before
// lowered to pg's cursor (the page is the newest of the lines older than
// it).
func pageBounds(start, end *time.Time, pg paging.Pager) (after, before string) {
	after, before = RangeBounds(start, end)
	if pg.Start != "" && (before == "" || pg.Start < before) {
		before = pg.Start
	}
	return after, before
}

// LogPage returns the page pg of the suffixes of tenant tid's lines
// created in [start, end), newest first, and its pagination, reading only
// the page: one backward walk of the log from the cursor (or the end of
// the range), past the page's offset, through the page and one line
// more, to know whether more follow. So a page costs its offset and its
// size, whatever the log holds; an offset is bounded by maxListOffset
// (deeper pages are reached by cursor), and the total is a lower bound:
// the lines walked, which is exact when no line follows the page (see
// ListLogs). ListLogs without an entity filter lists this way.
func LogPage(t *unit.Tx, tid string, start, end *time.Time, pg paging.Pager) ([]string, paging.Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	after, before := pageBounds(start, end, pg)
	walked, err := Newest(t, tid, after, before, skip+pg.Size+1)
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	p := paging.Pages(len(walked), pageNumber, pg.Size)
	lo, hi := min(skip, len(walked)), min(skip+pg.Size, len(walked))
	page := walked[lo:hi]
	if hi < len(walked) {
		p.After = paging.EncodeCursor(page[len(page)-1])
	}
	return page, p, nil
}

// EntityPage is LogPage for the lines of one entity (ListLogs with
// entity_type and entity_id): EntityNewest walks the places the
// entity's lines are indexed, back from the cursor (or the end of the
// range), for the page's offset, its size and one more. So a page of an
// entity costs its offset and its size, however many lines the entity
// has (a token read a million times), and its total is the same lower
// bound as logPage's.
func EntityPage(t *unit.Tx, tid, typ, id string, start, end *time.Time, pg paging.Pager) ([]string, paging.Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	after, before := pageBounds(start, end, pg)
	walked, err := EntityNewest(t, tid, typ, id, start, end, after, before, skip+pg.Size+1)
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	p := paging.Pages(len(walked), pageNumber, pg.Size)
	lo, hi := min(skip, len(walked)), min(skip+pg.Size, len(walked))
	page := walked[lo:hi]
	if hi < len(walked) {
		p.After = paging.EncodeCursor(page[len(page)-1])
	}
	return page, p, nil
}

// The lines of one entity type (ListLogs with entity_type alone): walked
// by WalkType, which says how.

// TypeLogPage returns page pg of tenant tid's lines about entities of type
// typ created in [start, end), newest first, with its pagination,
// examining at most the page's offset, its size and budget more lines,
// and answering from the type's index when the walk's first chunk holds
// none of the type, or the budget runs out, and the type has at most few
// lines (ListLogs: paging.ListBudget, both). The total is
// the same lower bound as logPage's (the lines of the type up to the end
// of the page, plus one when After is set), exact when After is empty or
// when the page was answered from the type's index.
func TypeLogPage(t *unit.Tx, tid, typ string, start, end *time.Time, pg paging.Pager, budget, few int) ([]Log, paging.Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	after, before := pageBounds(start, end, pg)
	w, err := WalkType(t, tid, typ, start, end, after, before, skip, pg.Size, budget, few)
	if err != nil {
		return nil, paging.Pagination{}, err
	}
	if w.FromIndex {
		return typePageOf(t, tid, w.Suffixes, pg)
	}
	data, p := walkedPage(w, pageNumber, pg.Size)
	return data, p, nil
}

// walkedPage is the page of a walk's lines (w not FromIndex): its data
// and pagination, its total a lower bound while After is set.
func walkedPage(w *TypePage, pageNumber, size int) ([]Log, paging.Pagination) {
	data := make([]Log, 0, len(w.Lines))
	for i := range w.Lines {
		data = append(data, LogOf(w.Keys[i], &w.Lines[i]))
	}
	total := w.Skipped + len(data)
	var cursor string
	if w.More && w.Last != "" {
		cursor = paging.EncodeCursor(w.Last)
		total++
	}
	p := paging.Pages(total, pageNumber, size)
	p.After = cursor
	return data, p
}

// typePageOf returns page pg of the lines at suffixes (oldest first: all
// those of a type, in a range), newest first, counted exactly.
func typePageOf(t *unit.Tx, tid string, suffixes []string, pg paging.Pager) ([]Log, paging.Pagination, error) {
	slices.Reverse(suffixes)
	lo, hi, p := pg.Window(len(suffixes), func(i int) string { return suffixes[i] }, true)
	data := make([]Log, 0, hi-lo)
	for _, s := range suffixes[lo:hi] {
		l, ok, err := GetLog(t, tid, s)
		if err != nil {
			return nil, paging.Pagination{}, err
		}
		if ok {
			data = append(data, l)
		}
	}
	return data, p, nil
}

// EntityTypes lists the entity types logs refer to, in a new slice.
func EntityTypes() []EntityType { return slices.Clone(entityTypes) }
