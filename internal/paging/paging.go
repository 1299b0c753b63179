// Package paging holds what every list of the Vault shares: the page a
// caller asks for (Request), the page it gets (Page, Pagination), the
// resolved request (Pager) and the opaque cursors that walk a list by
// position, not offset, so a walk sees every item that exists throughout
// exactly once.
package paging

import (
	"encoding/base64"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Page sizes. Lists default to DefaultPageSize items a page and accept up to
// MaxPageSize (members: MaxMemberPageSize), as the service this one follows
// does; a page past the end is empty, not an error, so page iterators that
// ask for page+1 until they see an empty page terminate.
const (
	// MaxListOffset bounds the offset of a walked list's page: (page-1)*size.
	MaxListOffset     = 10000
	DefaultPageSize   = 20
	MaxPageSize       = 100
	MaxMemberPageSize = 50
)

// Request asks for one page of a list. Zero values mean the defaults:
// page 1, DefaultPageSize items. Negative values, or a size above the
// list's maximum, are Invalid: never silently clamped.
type Request struct {
	Page int `json:"page"`
	Size int `json:"size"`
	// Start is a cursor: the Pagination.After of the previous page. When
	// set, the page holds the Size items that follow it in the list's
	// stable order, and Page must be 0 or 1. Its Pagination counts the
	// whole list for the lists that keep a count (tokens, applications,
	// reactors, proxies, members, invitations, tenants: see ListTokens,
	// ListApplications and ListTenants); logs count what follows the
	// cursor, as a lower bound (see ListLogs).
	Start string `json:"start,omitempty"`
}

// Pagination describes the page returned and the whole list. Token lists
// and searches count as ListTokens says: a kept count, or a lower bound.
type Pagination struct {
	TotalItems int `json:"total_items"`
	PageNumber int `json:"page_number"`
	PageSize   int `json:"page_size"`
	TotalPages int `json:"total_pages"`
	// After is an opaque cursor for the next page (pass it as
	// Request.Start); empty on the last page.
	After string `json:"after,omitempty"`
}

// Page is one page of a list.
type Page[T any] struct {
	Pagination Pagination `json:"pagination"`
	Data       []T        `json:"data"`
}

// Pager is a resolved Request: an offset page, or the size items that
// follow the position start when a cursor was given.
type Pager struct {
	Page, Size int
	Start      string // a decoded cursor: the position of the last item seen
}

// maxCursorLength bounds a cursor, so that a hostile one costs nothing.
const maxCursorLength = 1024

// Resolve applies defaults and bounds, and decodes the cursor.
func (r Request) Resolve(maxSize int) (Pager, error) {
	pg := Pager{Page: r.Page, Size: r.Size}
	fe := unit.FieldErrors{}
	switch {
	case pg.Page == 0:
		pg.Page = 1
	case pg.Page < 0:
		fe.Add("page", "must be 1 or more")
	}
	switch {
	case pg.Size == 0:
		pg.Size = DefaultPageSize
	case pg.Size < 0 || pg.Size > maxSize:
		fe.Add("size", "must be between 1 and %d", maxSize)
	}
	if r.Start != "" {
		pos, ok := DecodeCursor(r.Start)
		switch {
		case !ok:
			fe.Add("start", "is not a cursor returned by this list (pagination.after)")
		case pg.Page > 1:
			fe.Add("page", "cannot be used with start: a cursor page is always page 1 of what follows it")
		}
		pg.Start = pos
	}
	return pg, fe.Err()
}

// Offset is how many items of a walked list precede the page, and its
// page number: 0 and 1 for a cursor page, which starts after its cursor.
// An Offset past maxListOffset is Invalid naming page, since walking it
// would cost the Offset (items names what the list holds, for the
// message); such pages are reached by cursor.
func (pg Pager) Offset(items string) (skip, pageNumber int, err error) {
	if pg.Start != "" {
		return 0, 1, nil
	}
	if pg.Page-1 > MaxListOffset/pg.Size {
		return 0, 0, unit.InvalidField("page", "pages past the first %d %s are reached with start (pagination.after), not page", MaxListOffset, items)
	}
	return (pg.Page - 1) * pg.Size, pg.Page, nil
}

// EncodeCursor and DecodeCursor: a cursor is the position of the last item of a page in its list's order,
// base64url-encoded so that clients treat it as opaque. It holds nothing the
// caller has not seen: ids and creation times of items it was shown.
func EncodeCursor(pos string) string { return base64.RawURLEncoding.EncodeToString([]byte(pos)) }

func DecodeCursor(c string) (string, bool) {
	if len(c) > maxCursorLength {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 || !utf8.Valid(b) || slices.ContainsFunc(b, func(c byte) bool { return c < 0x20 }) {
		return "", false // no position holds a control character
	}
	return string(b), true
}

// Window places the page among n items ordered by position (pos(i) is the
// position of item i; ascending, or descending when desc). An offset page
// counts the whole list; a cursor page is page 1 of the items after the
// cursor, so its total counts only those. After is set when items follow
// the page. Because a position never changes and a cursor names a position,
// not an offset, a walk by cursor sees every item that exists throughout
// exactly once, however many are added or removed meanwhile.
func (pg Pager) Window(n int, pos func(int) string, desc bool) (lo, hi int, p Pagination) {
	total := n
	if pg.Start != "" {
		lo = sort.Search(n, func(i int) bool {
			if desc {
				return pos(i) < pg.Start
			}
			return pos(i) > pg.Start
		})
		total = n - lo
		hi = lo + min(pg.Size, total)
		p = Pages(total, 1, pg.Size)
	} else {
		lo, hi = PageBounds(n, pg.Page, pg.Size)
		p = Pages(total, pg.Page, pg.Size)
	}
	if hi < n && hi > lo {
		p.After = EncodeCursor(pos(hi - 1))
	}
	return lo, hi, p
}

// PageBounds returns the slice bounds of page in a list of total items.
func PageBounds(total, page, size int) (lo, hi int) {
	lo = min((page-1)*size, total)
	// (page-1)*size can overflow for absurd pages; treat that as past the end.
	if page-1 > total/size {
		lo = total
	}
	hi = min(lo+size, total)
	return lo, hi
}

// Pages describes page (of size items) of a list of total items.
func Pages(total, page, size int) Pagination {
	return Pagination{
		TotalItems: total,
		PageNumber: page,
		PageSize:   size,
		TotalPages: (total + size - 1) / size,
	}
}

// Paginate returns one page of items, ordered by pos: the list's stable
// order (ids for most resources; creation time then id for tokens). Sorting
// here keeps offset pages and cursors in one order by construction.
func Paginate[T any](items []T, pg Pager, pos func(T) string) *Page[T] {
	slices.SortStableFunc(items, func(a, b T) int { return strings.Compare(pos(a), pos(b)) })
	lo, hi, p := pg.Window(len(items), func(i int) string { return pos(items[i]) }, false)
	data := make([]T, hi-lo)
	copy(data, items[lo:hi])
	return &Page[T]{Pagination: p, Data: data}
}
