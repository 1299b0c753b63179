package paging

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ListBudget is how many items a walked page examines beyond its offset
// and its size: the lists of records (Records) and the token lists.
// Where filters or access rules hide more, the page is shorter, with an
// After that continues the walk.
const ListBudget = 1000

// Lists of applications, reactors, proxies, members and invitations.
//
// Their records are keyed by id under tenant/<tid>/<kind>/, and ids are
// their list order, so the records are their own ordered index: a page
// walks them from its cursor, opening only those it examines, and stops
// when it is full. It examines at most its offset, its size and
// ListBudget more records (filters by id or name may leave it short,
// with an after that continues), and a page number costs its offset, so
// (page-1)*size is bounded by MaxListOffset as for tokens. total_items
// is the tenant's kept count of the kind (barrier.CountedKinds: kept by
// the commits that write a record's first version or delete it; an
// expired application the sweeper has not removed yet is counted) when
// no filter applies, on a cursor page too (the whole list, not only what
// follows the cursor); with a filter it is a lower bound: the items shown
// up to the end of this page, plus one when after is set.
//
// Records lives here rather than with one feature because it knows
// nothing of what it lists: a kind, a prefix, a count and a show
// function, the same for every kind whose ids are its order.

// Records is one page of the records of kind of tenant tid: show opens
// one and returns the item to list, or nil to leave it out (a filter, an
// expired record). filtered says whether show leaves any out for a
// reason other than expiry, which makes the total a lower bound. It
// returns Invalid for a page past MaxListOffset, and the store's and
// show's errors.
func Records[T any](t *unit.Tx, tid, kind string, pg Pager, filtered bool, show func(kv barrier.StoredValue) (*T, error)) (*Page[T], error) {
	skip, _, err := pg.Offset("items")
	if err != nil {
		return nil, err
	}
	prefix := barrier.Tenant(tid).Records(kind)
	budget := skip + pg.Size + ListBudget
	data := []T{}
	after, last, more, skipped := pg.Start, "", false, 0
	for len(data) < pg.Size && budget > 0 {
		chunk := min(budget, max(pg.Size-len(data), 16)) + 1
		kvs, err := t.ScanValuesAfter(prefix, after, chunk)
		if err != nil {
			return nil, err
		}
		more = len(kvs) == chunk
		for i, kv := range kvs {
			if len(data) == pg.Size || budget == 0 {
				more, kvs = true, kvs[:i]
				break
			}
			budget--
			last = kv.Rest
			item, err := show(kv)
			if err != nil {
				return nil, err
			}
			if item == nil {
				continue
			}
			if skipped < skip {
				skipped++
				continue
			}
			data = append(data, *item)
		}
		if !more || len(kvs) == 0 {
			break
		}
		after = kvs[len(kvs)-1].Rest
	}
	var cursor string
	if more && last != "" {
		cursor = EncodeCursor(last)
	}
	var total int
	if filtered {
		total = skipped + len(data)
		if cursor != "" {
			total++
		}
	} else {
		n, err := t.ReadCount(barrier.Tenant(tid).Count(kind))
		if err != nil {
			return nil, err
		}
		total = n
	}
	pageNumber := pg.Page
	if pg.Start != "" {
		pageNumber = 1
	}
	p := Pages(total, pageNumber, pg.Size)
	p.After = cursor
	return &Page[T]{Pagination: p, Data: data}, nil
}
