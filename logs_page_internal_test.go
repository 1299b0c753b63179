package tokenvault

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"

	"github.com/tokenvault/tokenvault/store"
)

// TestLogPageIsTheWindowOfTheWholeList: logPage, which pages a tenant's
// lines by walking back from the cursor, gives exactly the lines and the
// cursor that cutting the whole list (logRange, newest first,
// pager.window) gives, for every page size, page number and cursor (an
// exact line's, one between lines, one past either end), with and without
// a date range; its total is the lines walked: what precedes the page's
// end in the list cut (after the cursor), plus one when more follow, and
// the whole list's count when none does.
func TestLogPageIsTheWindowOfTheWholeList(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	for i := range 12 {
		if _, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: i}); err != nil {
			t.Fatal(err)
		}
		lv.advance(time.Second)
	}
	from, to := time.Date(2030, 1, 2, 3, 4, 8, 0, time.UTC), time.Date(2030, 1, 2, 3, 4, 13, 0, time.UTC)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}, {&to, &from}}
	err := lv.v.view(ctx, func(tx *txn) error {
		whole, err := tx.logRange(barrier.Tenant(lv.tid).Logs(), nil, nil)
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
			all, err := tx.logRange(barrier.Tenant(lv.tid).Logs(), r[0], r[1])
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
					got, gotPag, err := auditlog.LogPage(tx.Tx, lv.tid, r[0], r[1], pg)
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

// logRange returns the suffixes (<nanos>/<id>) of the keys under prefix
// created in [start, end), oldest first: the whole list logPage's pages
// are cut from.
func (t *txn) logRange(prefix barrier.Prefix, start, end *time.Time) ([]string, error) {
	after, before := auditlog.RangeBounds(start, end)
	var suffixes []string
	err := t.Scan(prefix, after, 0, func(_ barrier.Key, rest string) error {
		if before != "" && rest >= before {
			return store.ErrStop
		}
		suffixes = append(suffixes, rest)
		return nil
	})
	return suffixes, err
}

// TestEntityPageIsTheWindowOfTheEntitysLines: entityPage, which merges
// backward walks of the entity index, the legacy index and the pending
// entries, gives exactly the lines and the cursor that cutting the
// entity's whole list (its lines in the log, newest first, pager.window)
// gives, for every page size, page number and cursor, with and without a
// date range, while its lines are indexed in all three places; its total
// is the lower bound logPage's is.
func TestEntityPageIsTheWindowOfTheEntitysLines(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	tok, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: "y"})
	if err != nil {
		t.Fatal(err)
	}
	read := func(n int) {
		for range n {
			lv.advance(time.Second)
			for _, id := range []string{tok.ID, other.ID} {
				if _, err := lv.v.GetToken(ctx, lv.key, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	read(6)
	lv.advance(time.Second)
	if _, err := lv.v.indexer.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	read(5) // these stay pending
	// Move three of the indexed lines to the legacy index, as a store of
	// the old layout has them.
	var lines []string // the token's lines, oldest first
	err = lv.v.view(ctx, func(tx *txn) error {
		return tx.ScanKeys(barrier.Tenant(lv.tid).Logs(), func(_ barrier.Key, suffix string) error {
			l, ok, err := auditlog.GetLog(tx.Tx, lv.tid, suffix)
			if ok && l.EntityID == tok.ID {
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
	err = lv.v.update(ctx, func(tx *txn) error {
		for _, s := range lines[1:4] {
			if err := tx.Delete(auditlog.IndexKey(lv.tid, EntityToken, tok.ID, s)); err != nil {
				return err
			}
			if err := tx.PutIndex(barrier.Tenant(lv.tid).LogEntityIndex(EntityToken, tok.ID).Key(s)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	from, to := lv.now().Add(-8*time.Second), lv.now().Add(-3*time.Second)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}}
	cursors := []string{"0", "~", "g"}
	for _, s := range lines {
		cursors = append(cursors, s, s+"~", s[:16], s[:16]+"/")
	}
	err = lv.v.view(ctx, func(tx *txn) error {
		for _, r := range ranges {
			after, before := auditlog.RangeBounds(r[0], r[1])
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
					got, gotPag, err := auditlog.EntityPage(tx.Tx, lv.tid, EntityToken, tok.ID, r[0], r[1], pg)
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
