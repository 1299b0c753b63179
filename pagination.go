package tokenvault

import "fmt"

// Page sizes. Lists default to DefaultPageSize items a page and accept up to
// MaxPageSize (members: MaxMemberPageSize), as the service this one follows
// does; a page past the end is empty, not an error, so page iterators that
// ask for page+1 until they see an empty page terminate.
const (
	DefaultPageSize   = 20
	MaxPageSize       = 100
	MaxMemberPageSize = 50
)

// PageRequest asks for one page of a list. Zero values mean the defaults:
// page 1, DefaultPageSize items. Negative values, or a size above the
// list's maximum, are Invalid: never silently clamped.
type PageRequest struct {
	Page int `json:"page"`
	Size int `json:"size"`
	// Start is a cursor: the Pagination.After of the previous page. When
	// set, the page holds the Size items that follow it in the list's
	// stable order, and Page must be 0 or 1.
	Start string `json:"start,omitempty"`
}

// Pagination describes the page returned and the whole list.
type Pagination struct {
	TotalItems int `json:"total_items"`
	PageNumber int `json:"page_number"`
	PageSize   int `json:"page_size"`
	TotalPages int `json:"total_pages"`
	// After is an opaque cursor for the next page (pass it as
	// PageRequest.Start); empty on the last page.
	After string `json:"after,omitempty"`
}

// Page is one page of a list.
type Page[T any] struct {
	Pagination Pagination `json:"pagination"`
	Data       []T        `json:"data"`
}

// resolve applies defaults and bounds.
func (r PageRequest) resolve(maxSize int) (page, size int, err error) {
	page, size = r.Page, r.Size
	fe := fieldErrors{}
	switch {
	case page == 0:
		page = 1
	case page < 0:
		fe.add("page", "must be 1 or more")
	}
	switch {
	case size == 0:
		size = DefaultPageSize
	case size < 0 || size > maxSize:
		fe.add("size", "must be between 1 and %d", maxSize)
	}
	return page, size, fe.err()
}

// pageBounds returns the slice bounds of page in a list of total items.
func pageBounds(total, page, size int) (lo, hi int) {
	lo = min((page-1)*size, total)
	// (page-1)*size can overflow for absurd pages; treat that as past the end.
	if page-1 > total/size {
		lo = total
	}
	hi = min(lo+size, total)
	return lo, hi
}

func pagination(total, page, size int) Pagination {
	return Pagination{
		TotalItems: total,
		PageNumber: page,
		PageSize:   size,
		TotalPages: (total + size - 1) / size,
	}
}

// paginate returns one page of items.
func paginate[T any](items []T, page, size int) *Page[T] {
	lo, hi := pageBounds(len(items), page, size)
	data := make([]T, hi-lo)
	copy(data, items[lo:hi])
	return &Page[T]{Pagination: pagination(len(items), page, size), Data: data}
}

// checkIDs refuses an id filter that holds anything but UUIDs, naming the
// offending entries as param[i].
func checkIDs(param string, ids []string) error {
	fe := fieldErrors{}
	for i, id := range ids {
		if !validID(id) {
			fe.add(fmt.Sprintf("%s[%d]", param, i), "must be a UUID")
		}
	}
	return fe.err()
}
