package vaulttest

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// Walk follows cursors from the first page to the last, calling between
// after every page, and returns the ids seen in order.
func Walk[T any](t *testing.T, size int, list func(tokenvault.PageRequest) (*tokenvault.Page[T], error), id func(T) string, between func()) []string {
	t.Helper()
	var seen []string
	req := tokenvault.PageRequest{Size: size}
	for range 1000 {
		page, err := list(req)
		if err != nil {
			t.Fatalf("list(%+v): %v", req, err)
		}
		if len(page.Data) > size {
			t.Fatalf("page of %d items, size %d", len(page.Data), size)
		}
		for _, item := range page.Data {
			seen = append(seen, id(item))
		}
		if page.Pagination.After == "" {
			return seen
		}
		if len(page.Data) == 0 {
			t.Fatalf("an empty page carries a cursor %q", page.Pagination.After)
		}
		req.Start = page.Pagination.After
		between()
	}
	t.Fatal("the walk did not end")
	return nil
}

// WantEachOnce fails unless seen holds every id of want exactly once, and no
// id twice.
func WantEachOnce(t *testing.T, seen, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, id := range seen {
		count[id]++
		if count[id] > 1 {
			t.Errorf("%s seen twice", id)
		}
	}
	for _, id := range want {
		if count[id] != 1 {
			t.Errorf("%s seen %d times, want once", id, count[id])
		}
	}
}

// PageReadBound is what a page of size n may read: its index entries and
// records, and a few reads of authentication, keys and counts.
func PageReadBound(n int) int64 { return int64(3*n + 40) }
