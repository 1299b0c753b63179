package auditlog

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestLogPageIsTheWindowOfTheWholeList: LogPage, which pages a tenant's
// lines by walking back from the cursor, gives exactly the lines and the
// cursor that cutting the whole list (logRange, newest first,
// paging.Pager.Window) gives, for every page size, page number and cursor (an
// exact line's, one between lines, one past either end), with and without
// a date range; its total is the lines walked: what precedes the page's
// end in the list cut (after the cursor), plus one when more follow, and
// the whole list's count when none does.
func TestLogPageIsTheWindowOfTheWholeList(t *testing.T) {
	ctx := context.Background()
	w := newLogWork(t)
	for i := range 12 {
		w.log(t, unit.EntityToken, fmt.Sprintf("token-%02d", i), unit.OpCreate)
		w.Advance(time.Second)
	}
	from, to := time.Date(2030, 1, 2, 3, 4, 8, 0, time.UTC), time.Date(2030, 1, 2, 3, 4, 13, 0, time.UTC)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}, {&to, &from}}
	err := w.View(ctx, func(tx *unit.Tx) error {
		whole, err := logRange(tx, barrier.Tenant(w.tid).Logs(), nil, nil)
		if err != nil {
			return err
		}
		if len(whole) < 15 {
			t.Fatalf("only %d lines", len(whole))
		}
		cursors := []string{"", "0", "~"}
		for _, s := range whole {
			cursors = append(cursors, s, s+"~", s[:16])
		}
		for _, r := range ranges {
			all, err := logRange(tx, barrier.Tenant(w.tid).Logs(), r[0], r[1])
			if err != nil {
				return err
			}
			slices.Reverse(all)
			for size := 1; size <= 6; size++ {
				var pagers []paging.Pager
				for page := 1; page <= len(all)+2; page++ {
					pagers = append(pagers, paging.Pager{Page: page, Size: size})
				}
				for _, c := range cursors[1:] {
					pagers = append(pagers, paging.Pager{Page: 1, Size: size, Start: c})
				}
				for _, pg := range pagers {
					lo, hi, wantPag := pg.Window(len(all), func(i int) string { return all[i] }, true)
					base := 0 // where the walk begins in all
					if pg.Start != "" {
						base = lo
					}
					wantPag.TotalItems = hi - base
					if hi < len(all) {
						wantPag.TotalItems++
					}
					wantPag.TotalPages = (wantPag.TotalItems + size - 1) / size
					got, gotPag, err := LogPage(tx, w.tid, r[0], r[1], pg)
					if err != nil {
						return err
					}
					if !slices.Equal(got, all[lo:hi]) || gotPag != wantPag {
						t.Errorf("range %v, %+v: lines %v, want %v; pagination (-want +got):\n%s",
							r, pg, got, all[lo:hi], cmp.Diff(wantPag, gotPag))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEntityPageIsTheWindowOfTheEntitysLines: EntityPage, which merges
// backward walks of the entity index, the legacy index and the pending
// entries, gives exactly the lines and the cursor that cutting the
// entity's whole list (its lines in the log, newest first,
// paging.Pager.Window) gives, for every page size, page number and
// cursor, with and without a date range, while its lines are indexed in
// all three places; its total is the lower bound LogPage's is.
func TestEntityPageIsTheWindowOfTheEntitysLines(t *testing.T) {
	ctx := context.Background()
	w := newLogWork(t)
	tok, other := "token-x", "token-y"
	w.log(t, unit.EntityToken, tok, unit.OpCreate)
	w.log(t, unit.EntityToken, other, unit.OpCreate)
	read := func(n int) {
		for range n {
			w.Advance(time.Second)
			for _, id := range []string{tok, other} {
				w.log(t, unit.EntityToken, id, unit.OpRead)
			}
		}
	}
	read(6)
	w.Advance(time.Second)
	w.indexPending(t)
	read(5) // these stay pending
	if n := w.countKeys(t, barrier.Tenant(w.tid).PendingLogIndex()); n != 10 {
		t.Fatalf("%d pending entries, want the last 10 reads'", n)
	}
	// Move three of the indexed lines to the legacy index, as a store of
	// the old layout has them.
	var lines []string // the token's lines, oldest first
	err := w.View(ctx, func(tx *unit.Tx) error {
		return tx.ScanKeys(barrier.Tenant(w.tid).Logs(), func(_ barrier.Key, suffix string) error {
			l, ok, err := GetLog(tx, w.tid, suffix)
			if ok && l.EntityID == tok {
				lines = append(lines, suffix)
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 12 {
		t.Fatalf("the token has %d lines, want 12", len(lines))
	}
	w.toLegacy(t, unit.EntityToken, tok, lines[1:4])
	from, to := w.Now().Add(-8*time.Second), w.Now().Add(-3*time.Second)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}}
	cursors := []string{"0", "~", "g"}
	for _, s := range lines {
		cursors = append(cursors, s, s+"~", s[:16], s[:16]+"/")
	}
	err = w.View(ctx, func(tx *unit.Tx) error {
		for _, r := range ranges {
			after, before := RangeBounds(r[0], r[1])
			var all []string // newest first
			for _, s := range slices.Backward(lines) {
				if (after == "" || s > after) && (before == "" || s < before) {
					all = append(all, s)
				}
			}
			for size := 1; size <= 5; size++ {
				var pagers []paging.Pager
				for page := 1; page <= len(all)+2; page++ {
					pagers = append(pagers, paging.Pager{Page: page, Size: size})
				}
				for _, c := range cursors {
					pagers = append(pagers, paging.Pager{Page: 1, Size: size, Start: c})
				}
				for _, pg := range pagers {
					lo, hi, wantPag := pg.Window(len(all), func(i int) string { return all[i] }, true)
					base := 0
					if pg.Start != "" {
						base = lo
					}
					wantPag.TotalItems = hi - base
					if hi < len(all) {
						wantPag.TotalItems++
					}
					wantPag.TotalPages = (wantPag.TotalItems + size - 1) / size
					got, gotPag, err := EntityPage(tx, w.tid, unit.EntityToken, tok, r[0], r[1], pg)
					if err != nil {
						return err
					}
					if !slices.Equal(got, all[lo:hi]) || gotPag != wantPag {
						t.Errorf("range %v, %+v: lines %v, want %v; pagination (-want +got):\n%s",
							r, pg, got, all[lo:hi], cmp.Diff(wantPag, gotPag))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
