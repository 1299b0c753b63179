package listing

import (
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Page answers a walkable query (Query.Walkable; the root's ListTokens
// and SearchTokens): the tokens matching q that p may use with perm, in
// list order, one page of them, at the cost described in the package
// doc. show presents a matching record to p, or returns nil when p may
// not see it (perm does not reach it, or q tests what p may not read):
// the tokens feature decides what a caller is shown; the lists decide
// which records a page examines, in which order, and its pagination.
//
// It returns Invalid naming start for a cursor this list did not hand
// out, Invalid naming page for a page past paging.MaxListOffset, and the
// store's errors.
func Page[T any](l *Lists, t *unit.Tx, p *access.Principal, perm string, q Query, pg paging.Pager, show func(rec *tokens.Record) *T) (*paging.Page[T], error) {
	tid := p.TenantID
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	skip, _, err := pg.Offset("tokens")
	if err != nil {
		return nil, err
	}
	start, err := openCursor(ks, tid, pg.Start)
	if err != nil {
		return nil, err
	}
	after := ""
	if start != "" {
		var ok bool
		if after, ok = packCursor(start); !ok {
			return nil, unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
		}
	}
	idxs, total, exact, err := l.listIndexes(t, ks, tid, q)
	if err != nil {
		return nil, err
	}
	exact = exact && p.ReachesAll(perm)

	budget := skip + pg.Size + paging.ListBudget
	walk := newListWalk(t, idxs, after)
	var data []T
	var last string    // the position of the last entry examined
	lastShown := false // whether it was shown
	skipped := 0       // visible tokens passed by before the page
	for len(data) < pg.Size && budget > 0 {
		pos, ok, err := walk.next(min(budget, max(pg.Size-len(data), 16)))
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		budget--
		last, lastShown = pos, false
		rec, err := l.listed(t, q, tid, pos)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		item := show(rec)
		if item == nil {
			continue
		}
		if skipped < skip {
			skipped++
			continue
		}
		data = append(data, *item)
		lastShown = true
	}
	more, err := walk.more()
	if err != nil {
		return nil, err
	}

	page := &paging.Page[T]{Data: data}
	if data == nil {
		page.Data = []T{}
	}
	if more && last != "" {
		if lastShown {
			page.Pagination.After = paging.EncodeCursor(cursorPosition(last))
		} else {
			page.Pagination.After = paging.EncodeCursor(sealCursor(ks, tid, cursorPosition(last)))
		}
	}
	pageNumber := pg.Page
	if pg.Start != "" {
		pageNumber = 1
	}
	if !exact {
		total = skipped + len(data)
		if page.Pagination.After != "" {
			total++
		}
	}
	after2 := page.Pagination.After
	page.Pagination = paging.Pages(total, pageNumber, pg.Size)
	page.Pagination.After = after2
	return page, nil
}

// listed is the record at packed position pos of a list index when it
// is one q matches, or nil: gone or erased (an entry a concurrent delete removed
// is not seen by this transaction, but a record may be missing in a
// store built before the index), expired, or filtered out by q.
func (l *Lists) listed(t *unit.Tx, q Query, tid, pos string) (*tokens.Record, error) {
	id, ok := positionID(pos)
	if !ok {
		return nil, nil
	}
	rec, err := l.Load(t, tid, id, false)
	if err != nil || rec == nil || rec.Erased || recPosition(rec) != pos || !q.Matches(rec) {
		return nil, err
	}
	return rec, nil
}
