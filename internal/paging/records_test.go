package paging_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestRecords pages the records of a kind in id order: by page number and
// by cursor, the kept count as the total when nothing is filtered, a
// lower bound when a filter leaves records out, and a page short of its
// size, with a cursor that continues, when the filter hides more than
// the budget lets it examine.
func TestRecords(t *testing.T) {
	const tid, kind = "tenant-1", unit.EntityReactor
	w := worktest.New(t)
	w.Tenant(t, tid)
	n := paging.ListBudget + 200
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		for i := range n {
			if err := tx.PutIndex(barrier.Tenant(tid).Record(kind, fmt.Sprintf("r%05d", i))); err != nil {
				return err
			}
		}
		tx.AddCount(barrier.Tenant(tid).Count(kind), int64(n))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	page := func(pg paging.Pager, filtered bool, show func(id string) bool) *paging.Page[string] {
		t.Helper()
		var out *paging.Page[string]
		err := w.View(context.Background(), func(tx *unit.Tx) error {
			var err error
			out, err = paging.Records(tx, tid, kind, pg, filtered, func(kv barrier.StoredValue) (*string, error) {
				if !show(kv.Rest) {
					return nil, nil
				}
				return &kv.Rest, nil
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := func(string) bool { return true }

	p := page(paging.Pager{Page: 3, Size: 10}, false, all)
	if p.Data[0] != "r00020" || len(p.Data) != 10 || p.Pagination.TotalItems != n || p.Pagination.PageNumber != 3 {
		t.Errorf("page 3 = %v..., %+v", p.Data[:1], p.Pagination)
	}
	start, ok := paging.DecodeCursor(p.Pagination.After)
	if !ok || start != "r00029" {
		t.Fatalf("after of page 3 = %q, want the cursor of r00029", p.Pagination.After)
	}
	next := page(paging.Pager{Page: 1, Size: 10, Start: start}, false, all)
	if next.Data[0] != "r00030" || next.Pagination.TotalItems != n || next.Pagination.PageNumber != 1 {
		t.Errorf("cursor page = %v..., %+v; want r00030 and the whole list's count", next.Data[:1], next.Pagination)
	}
	last := page(paging.Pager{Page: 1, Size: 10, Start: fmt.Sprintf("r%05d", n-5)}, false, all)
	if len(last.Data) != 4 || last.Pagination.After != "" {
		t.Errorf("last page = %v, after %q; want 4 records and no after", last.Data, last.Pagination.After)
	}

	// A filter that shows every hundredth record: the first page examines
	// its size and the budget, and stops short.
	rare := func(id string) bool { return strings.HasSuffix(id, "00") }
	f := page(paging.Pager{Page: 1, Size: 20}, true, rare)
	wantShown := (20 + paging.ListBudget + 99) / 100
	if len(f.Data) != wantShown || f.Pagination.After == "" || f.Pagination.TotalItems != wantShown+1 {
		t.Errorf("filtered page = %d records, after %q, %+v; want %d, a cursor and a lower bound of %d",
			len(f.Data), f.Pagination.After, f.Pagination, wantShown, wantShown+1)
	}
	start, _ = paging.DecodeCursor(f.Pagination.After)
	rest := page(paging.Pager{Page: 1, Size: 20, Start: start}, true, rare)
	if got := append(slices.Clone(f.Data), rest.Data...); len(got) != (n+99)/100 || rest.Pagination.After != "" {
		t.Errorf("the filtered walk = %v, want every hundredth record of %d", got, n)
	}

	err = w.View(context.Background(), func(tx *unit.Tx) error {
		_, err := paging.Records(tx, tid, kind, paging.Pager{Page: paging.MaxListOffset, Size: 10}, false,
			func(barrier.StoredValue) (*string, error) { return nil, nil })
		return err
	})
	if unit.ErrorKind(err) != unit.Invalid {
		t.Errorf("a page past MaxListOffset = %v, want Invalid", err)
	}
}
