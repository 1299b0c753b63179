package tokenvault

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLogPageIsTheWindowOfTheWholeList: logPage, which pages a tenant's
// lines without holding them, gives exactly what cutting the whole list
// (logRange, newest first, pager.window) gives, for every page size, page
// number and cursor (an exact line's, one between lines, one past either
// end), with and without a date range, in one scan and (past its ring)
// in two.
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
					// A ring of 7 makes deeper pages take two scans.
					for _, ring := range []int{7, maxLogRing} {
						got, gotPag, err := tx.logPage(lv.tid, r[0], r[1], pg, ring)
						if err != nil {
							return err
						}
						if !slices.Equal(got, all[lo:hi]) || gotPag != wantPag {
							t.Errorf("range %v, %+v, ring %d: lines %v, want %v; pagination (-want +got):\n%s",
								r, pg, ring, got, all[lo:hi], cmp.Diff(wantPag, gotPag))
						}
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
