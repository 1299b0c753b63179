package auditlog

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestTypePageWalksToTheTypesLines: TypeLogPage, which walks the log for the
// lines of a type within a budget and answers a rare type from its
// indexes, lists by cursor exactly the type's lines in a range, newest
// first, each once, whatever its budget and its index limit, and each
// offset page starts the window of the type's lines: with lines of the
// type in the entity index, in the legacy index and pending, among lines
// of other types.
func TestTypePageWalksToTheTypesLines(t *testing.T) {
	ctx := context.Background()
	w := newLogWork(t)
	var toks []string
	for i := range 3 {
		toks = append(toks, fmt.Sprint("token-", i))
		w.log(t, unit.EntityToken, toks[i], unit.OpCreate)
		w.Advance(time.Second)
	}
	card := "card-0"
	w.log(t, unit.EntityCard, card, unit.OpCreate)
	read := func(n int) {
		for range n {
			w.Advance(time.Second)
			w.log(t, unit.EntityCard, card, unit.OpRead)
			for _, id := range toks {
				w.log(t, unit.EntityToken, id, unit.OpRead)
			}
		}
	}
	read(4)
	w.Advance(time.Second)
	w.indexPending(t)
	read(3) // these stay pending
	if n := w.countKeys(t, barrier.Tenant(w.tid).PendingLogIndex()); n == 0 {
		t.Fatal("no pending entries: the test needs some")
	}

	// The log, oldest first: each line's suffix and its entity type.
	type line struct{ suffix, id, typ string }
	var lines []line
	err := w.View(ctx, func(tx *unit.Tx) error {
		return tx.ScanKeys(barrier.Tenant(w.tid).Logs(), func(_ barrier.Key, suffix string) error {
			l, ok, err := GetLog(tx, w.tid, suffix)
			if ok {
				lines = append(lines, line{suffix, l.ID, l.EntityType})
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Move three of the cards' indexed lines to the legacy index, as a
	// store of the old layout has them.
	var moved []string
	for _, l := range lines {
		if l.typ == unit.EntityCard && len(moved) < 3 {
			moved = append(moved, l.suffix)
		}
	}
	if len(moved) != 3 {
		t.Fatalf("%d lines of the card to move to the legacy index, want 3", len(moved))
	}
	w.toLegacy(t, unit.EntityCard, card, moved)

	from, to := w.Now().Add(-6*time.Second), w.Now().Add(-2*time.Second)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}}
	err = w.View(ctx, func(tx *unit.Tx) error {
		for _, typ := range []string{unit.EntityCard, unit.EntityToken, unit.EntityApplication, "spaceship"} {
			for _, r := range ranges {
				after, before := RangeBounds(r[0], r[1])
				var want []string // the type's lines in range, newest first
				for _, l := range slices.Backward(lines) {
					if l.typ == typ && (after == "" || l.suffix > after) && (before == "" || l.suffix < before) {
						want = append(want, l.id)
					}
				}
				for _, budget := range []int{0, 1, 3, 1000} {
					for _, few := range []int{0, 2, 1000} {
						for size := 1; size <= 4; size++ {
							name := fmt.Sprintf("%s in %v, budget %d, few %d, size %d", typ, r, budget, few, size)
							// By cursor, to the end.
							var got []string
							pg := paging.Pager{Page: 1, Size: size}
							for calls := 0; ; calls++ {
								if calls > len(lines)+2 {
									t.Fatalf("%s: the walk does not end", name)
								}
								data, p, err := TypeLogPage(tx, w.tid, typ, r[0], r[1], pg, budget, few)
								if err != nil {
									return err
								}
								for _, l := range data {
									got = append(got, l.ID)
								}
								if len(data) > size || p.TotalItems < len(data) {
									t.Errorf("%s: a page of %d lines, %+v", name, len(data), p)
								}
								if p.After == "" {
									if p.TotalItems != len(data) {
										t.Errorf("%s: the last page's total %d, want its %d lines", name, p.TotalItems, len(data))
									}
									break
								}
								pg.Start, _ = paging.DecodeCursor(p.After)
							}
							if !slices.Equal(got, want) {
								t.Errorf("%s: the walk listed %v, want %v", name, got, want)
							}
							// Offset pages start their window.
							for page := 2; page <= 3; page++ {
								data, _, err := TypeLogPage(tx, w.tid, typ, r[0], r[1], paging.Pager{Page: page, Size: size}, budget, few)
								if err != nil {
									return err
								}
								lo := min((page-1)*size, len(want))
								window := want[lo:min(lo+size, len(want))]
								var ids []string
								for _, l := range data {
									ids = append(ids, l.ID)
								}
								if len(ids) > len(window) || !slices.Equal(ids, window[:len(ids)]) {
									t.Errorf("%s, page %d: %v, want the start of %v", name, page, ids, window)
								}
							}
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
