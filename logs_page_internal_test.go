package tokenvault

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		whole, err := tx.logRange(logPrefix(lv.tid), nil, nil)
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
			all, err := tx.logRange(logPrefix(lv.tid), r[0], r[1])
			if err != nil {
				return err
			}
			slices.Reverse(all)
			for size := 1; size <= 6; size++ {
				var pagers []pager
				for page := 1; page <= len(all)+2; page++ {
					pagers = append(pagers, pager{page: page, size: size})
				}
				for _, c := range cursors[1:] {
					pagers = append(pagers, pager{page: 1, size: size, start: c})
				}
				for _, pg := range pagers {
					lo, hi, wantPag := pg.window(len(all), func(i int) string { return all[i] }, true)
					base := 0 // where the walk begins in all
					if pg.start != "" {
						base = lo
					}
					wantPag.TotalItems = hi - base
					if hi < len(all) {
						wantPag.TotalItems++
					}
					wantPag.TotalPages = (wantPag.TotalItems + size - 1) / size
					got, gotPag, err := tx.logPage(lv.tid, r[0], r[1], pg)
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
