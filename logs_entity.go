package tokenvault

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/paging"
)

// entityPage is logPage for the lines of one entity (ListLogs with
// entity_type and entity_id): auditlog.EntityNewest walks the places the
// entity's lines are indexed, back from the cursor (or the end of the
// range), for the page's offset, its size and one more. So a page of an
// entity costs its offset and its size, however many lines the entity
// has (a token read a million times), and its total is the same lower
// bound as logPage's.
func (t *txn) entityPage(tid, typ, id string, start, end *time.Time, pg paging.Pager) ([]string, Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, Pagination{}, err
	}
	after, before := logPageBounds(start, end, pg)
	walked, err := auditlog.EntityNewest(t.Tx, tid, typ, id, start, end, after, before, skip+pg.Size+1)
	if err != nil {
		return nil, Pagination{}, err
	}
	p := paging.Pages(len(walked), pageNumber, pg.Size)
	lo, hi := min(skip, len(walked)), min(skip+pg.Size, len(walked))
	page := walked[lo:hi]
	if hi < len(walked) {
		p.After = paging.EncodeCursor(page[len(page)-1])
	}
	return page, p, nil
}
