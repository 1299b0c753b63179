package listing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// reader is a principal that reads every token of the fixture's tenant.
var reader = &access.Principal{TenantID: testTenant, Permissions: []string{"token:read"}}

// page is one page of q for reader, showing each record as its id
// unless hide names it.
func (f *fixture) page(t *testing.T, q Query, pg paging.Pager, hide ...string) *paging.Page[string] {
	t.Helper()
	var out *paging.Page[string]
	f.view(t, func(tx *unit.Tx) error {
		var err error
		out, err = Page(f.lists, tx, reader, "token:read", q, pg, func(rec *tokens.Record) *string {
			if slices.Contains(hide, rec.ID) {
				return nil
			}
			return &rec.ID
		})
		return err
	})
	return out
}

// walk follows a list by cursor from its first page, and returns the ids
// in the order seen.
func (f *fixture) walk(t *testing.T, q Query, size int, hide ...string) []string {
	t.Helper()
	var ids []string
	pg := paging.Pager{Page: 1, Size: size}
	for range 100 {
		p := f.page(t, q, pg, hide...)
		ids = append(ids, p.Data...)
		if p.Pagination.After == "" {
			return ids
		}
		start, ok := paging.DecodeCursor(p.Pagination.After)
		if !ok {
			t.Fatalf("after %q does not decode", p.Pagination.After)
		}
		pg = paging.Pager{Page: 1, Size: size, Start: start}
	}
	t.Fatal("the walk does not end")
	return nil
}

// TestPageMergesShapesInPositionOrder: tokens of several shapes (types
// and container sets) are listed once each, in creation order, whatever
// the filter merges, with the kept counts as the exact total.
func TestPageMergesShapesInPositionOrder(t *testing.T) {
	f := newFixture(t)
	f.add(t, "t0", unit.TypeToken, 0)
	f.add(t, "c1", unit.TypeCard, 1, "/a/")
	f.add(t, "t2", unit.TypeToken, 2, "/a/b/", "/c/")
	f.add(t, "t3", unit.TypeToken, 3, "/c/", "/a/b/") // the shape of t2
	f.add(t, "b4", unit.TypeBank, 4, "/c/")
	f.add(t, "t5", unit.TypeToken, 5)

	for _, tc := range []struct {
		name string
		q    Query
		want []string
	}{
		{"every token", Query{}, []string{"t0", "c1", "t2", "t3", "b4", "t5"}},
		{"root container", Query{Container: "/"}, []string{"t0", "c1", "t2", "t3", "b4", "t5"}},
		{"type", Query{Type: unit.TypeToken}, []string{"t0", "t2", "t3", "t5"}},
		{"container and below", Query{Container: "/a/"}, []string{"c1", "t2", "t3"}},
		{"container", Query{Container: "/c/"}, []string{"t2", "t3", "b4"}},
		{"type in container", Query{Container: "/a/", Type: unit.TypeCard}, []string{"c1"}},
		{"no match", Query{Container: "/d/"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := f.page(t, tc.q, paging.Pager{Page: 1, Size: 100})
			if diff := cmp.Diff(tc.want, p.Data, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
				t.Errorf("Page(%+v) (-want +got):\n%s", tc.q, diff)
			}
			if p.Pagination.TotalItems != len(tc.want) || p.Pagination.After != "" {
				t.Errorf("Page(%+v).Pagination = %+v, want %d items and no after", tc.q, p.Pagination, len(tc.want))
			}
			if got := f.walk(t, tc.q, 2); !slices.Equal(got, tc.want) {
				t.Errorf("walk of %+v by 2 = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

// TestPageBudgetEndsOnASealedCursor: when the caller's access hides so
// many tokens that a page examines its whole budget (its size and
// paging.ListBudget more) before it is full, the page is short and its
// cursor, which stops on a token the caller was not shown, is sealed with
// the tenant's keys: it holds neither that token's id nor its time, opens
// for no other tenant, and continues the walk.
func TestPageBudgetEndsOnASealedCursor(t *testing.T) {
	f := newFixture(t)
	n := paging.ListBudget + 3
	var hidden []string
	f.update(t, func(tx *unit.Tx) error {
		for i := range n {
			rec := &tokens.Record{ID: fmt.Sprintf("tok-%04d", i), TenantID: testTenant, Type: unit.TypeToken, Containers: []string{"/"},
				CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, i, time.UTC)}
			f.recs[rec.ID] = rec
			if i > 0 && i < n-1 {
				hidden = append(hidden, rec.ID)
			}
			if err := f.lists.List(tx, rec); err != nil {
				return err
			}
		}
		return nil
	})
	p := f.page(t, Query{}, paging.Pager{Page: 1, Size: 2}, hidden...)
	if !slices.Equal(p.Data, []string{"tok-0000"}) || p.Pagination.After == "" {
		t.Fatalf("first page = %v after %q, want tok-0000 and a cursor", p.Data, p.Pagination.After)
	}
	if p.Pagination.TotalItems != n {
		t.Errorf("total = %d, want the kept count %d", p.Pagination.TotalItems, n)
	}
	start, _ := paging.DecodeCursor(p.Pagination.After)
	if !strings.HasPrefix(start, sealedCursorPrefix) {
		t.Fatalf("cursor %q on a hidden token is not sealed", start)
	}
	last := fmt.Sprintf("tok-%04d", paging.ListBudget+1) // the last examined
	f.view(t, func(tx *unit.Tx) error {
		ks, err := tx.TenantKeys(testTenant, false)
		if err != nil {
			return err
		}
		if opened, err := openCursor(ks, testTenant, start); err != nil || opened != cursorPosition(recPosition(f.recs[last])) {
			t.Errorf("openCursor(%q) = %q, %v; want the position of %s", start, opened, err, last)
		}
		if _, err := openCursor(ks, "tenant-2", start); unit.ErrorKind(err) != unit.Invalid {
			t.Errorf("the cursor opened for another tenant: %v, want Invalid", err)
		}
		return nil
	})
	next := f.page(t, Query{}, paging.Pager{Page: 1, Size: 2, Start: start}, hidden...)
	if want := []string{fmt.Sprintf("tok-%04d", n-1)}; !slices.Equal(next.Data, want) || next.Pagination.After != "" {
		t.Errorf("next page = %v after %q, want %v and no cursor", next.Data, next.Pagination.After, want)
	}
	err := f.work.View(context.Background(), func(tx *unit.Tx) error {
		_, err := Page(f.lists, tx, reader, "token:read", Query{}, paging.Pager{Page: 1, Size: 2, Start: "not a position"},
			func(rec *tokens.Record) *string { return &rec.ID })
		return err
	})
	if unit.ErrorKind(err) != unit.Invalid {
		t.Errorf("Page from a cursor no list handed out: %v, want Invalid", err)
	}
}

// TestMoveWritesOnlyWhatChanges: an update that keeps a token's shape
// and position writes no list entry; one that changes its containers
// moves its entry and count to its new shape; Unlist removes both.
func TestMoveWritesOnlyWhatChanges(t *testing.T) {
	f := newFixture(t)
	rec := f.add(t, "tok", unit.TypeToken, 0, "/a/")
	same := *rec
	same.Metadata = map[string]string{"k": "v"}
	before := f.dump(t)
	f.update(t, func(tx *unit.Tx) error { return f.lists.Move(tx, rec, &same) })
	if diff := cmp.Diff(before, f.dump(t)); diff != "" {
		t.Errorf("Move to the same shape and position changed the store (-before +after):\n%s", diff)
	}
	moved := same
	moved.Containers = []string{"/b/"}
	f.recs["tok"] = &moved
	f.update(t, func(tx *unit.Tx) error { return f.lists.Move(tx, rec, &moved) })
	if got := f.page(t, Query{Container: "/a/"}, paging.Pager{Page: 1, Size: 10}); len(got.Data) != 0 || got.Pagination.TotalItems != 0 {
		t.Errorf("/a/ after the move = %v (%d items), want none", got.Data, got.Pagination.TotalItems)
	}
	if got := f.page(t, Query{Container: "/b/"}, paging.Pager{Page: 1, Size: 10}); !slices.Equal(got.Data, []string{"tok"}) || got.Pagination.TotalItems != 1 {
		t.Errorf("/b/ after the move = %v (%d items), want tok", got.Data, got.Pagination.TotalItems)
	}
	f.update(t, func(tx *unit.Tx) error { return f.lists.Unlist(tx, &moved) })
	if got := f.page(t, Query{}, paging.Pager{Page: 1, Size: 10}); len(got.Data) != 0 || got.Pagination.TotalItems != 0 {
		t.Errorf("after Unlist = %v (%d items), want none", got.Data, got.Pagination.TotalItems)
	}
}

// TestShapesPastTheRegistryOverflow: past maxListShapes shapes, a token
// of a new shape is listed in its type's overflow list and marks its
// containers, so every list still holds it once: every token, its type,
// its container (a lower bound there, since the overflow list is
// filtered), and a container no overflow token is in stays exact.
func TestShapesPastTheRegistryOverflow(t *testing.T) {
	f := newFixture(t)
	for i := range maxListShapes {
		f.add(t, fmt.Sprintf("reg-%03d", i), unit.TypeToken, i, fmt.Sprintf("/c/%03d/", i))
	}
	f.add(t, "over", unit.TypeToken, maxListShapes, "/x/y/")
	f.lists.Forget() // a Vault that opens on the store learns it again
	f.add(t, "over2", unit.TypeToken, maxListShapes+1, "/x/z/")

	all := f.walk(t, Query{}, 100)
	if len(all) != maxListShapes+2 || all[maxListShapes] != "over" || all[maxListShapes+1] != "over2" {
		t.Errorf("every token: %d tokens, last %v", len(all), all[max(0, len(all)-2):])
	}
	p := f.page(t, Query{}, paging.Pager{Page: 1, Size: 1})
	if p.Pagination.TotalItems != maxListShapes+2 {
		t.Errorf("total of every token = %d, want %d", p.Pagination.TotalItems, maxListShapes+2)
	}
	x := f.page(t, Query{Container: "/x/"}, paging.Pager{Page: 1, Size: 10})
	if !slices.Equal(x.Data, []string{"over", "over2"}) {
		t.Errorf("/x/ = %v, want over over2", x.Data)
	}
	y := f.page(t, Query{Container: "/x/y/"}, paging.Pager{Page: 1, Size: 10})
	if !slices.Equal(y.Data, []string{"over"}) {
		t.Errorf("/x/y/ = %v, want over", y.Data)
	}
	c := f.page(t, Query{Container: "/c/007/"}, paging.Pager{Page: 1, Size: 10})
	if !slices.Equal(c.Data, []string{"reg-007"}) || c.Pagination.TotalItems != 1 {
		t.Errorf("/c/007/ = %v (%d items), want reg-007 exactly", c.Data, c.Pagination.TotalItems)
	}
	var marked bool
	f.view(t, func(tx *unit.Tx) error {
		ks, err := tx.TenantKeys(testTenant, false)
		if err != nil {
			return err
		}
		marked, err = tx.Has(overflowMark(ks, testTenant, "/c/"))
		return err
	})
	if marked {
		t.Error("/c/, which holds no overflow token, is marked")
	}
}

// TestAncestors: every container and its ancestors but the root, once.
func TestAncestors(t *testing.T) {
	got := ancestors([]string{"/a/b/c/", "/a/d/", "/e/"})
	want := []string{"/a/", "/a/b/", "/a/b/c/", "/a/d/", "/e/"}
	if !slices.Equal(got, want) {
		t.Errorf("ancestors = %v, want %v", got, want)
	}
}
