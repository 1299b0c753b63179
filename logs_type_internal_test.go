package tokenvault

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
)

// TestTypePageWalksToTheTypesLines: typePage, which walks the log for the
// lines of a type within a budget and answers a rare type from its
// indexes, lists by cursor exactly the type's lines in a range, newest
// first, each once, whatever its budget and its index limit, and each
// offset page starts the window of the type's lines: with lines of the
// type in the entity index, in the legacy index and pending, among lines
// of other types.
func TestTypePageWalksToTheTypesLines(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	var toks []string
	for i := range 3 {
		tok, err := lv.v.CreateToken(ctx, lv.key, TokenRequest{Type: TypeToken, Data: fmt.Sprint("x", i)})
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok.ID)
		lv.advance(time.Second)
	}
	card, err := lv.v.CreateToken(ctx, lv.key, cardRequestForTest())
	if err != nil {
		t.Fatal(err)
	}
	read := func(n int) {
		for range n {
			lv.advance(time.Second)
			for _, id := range append([]string{card.ID}, toks...) {
				if _, err := lv.v.GetToken(ctx, lv.key, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	read(4)
	lv.advance(time.Second)
	if _, err := lv.v.indexer.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	read(3) // these stay pending
	if n := lv.countKeys(t, barrier.Tenant(lv.tid).PendingLogIndex()); n == 0 {
		t.Fatal("no pending entries: the test needs some")
	}

	// The log, oldest first: each line's suffix and its entity type.
	type line struct{ suffix, id, typ string }
	var lines []line
	err = lv.v.view(ctx, func(tx *txn) error {
		return tx.ScanKeys(barrier.Tenant(lv.tid).Logs(), func(_ barrier.Key, suffix string) error {
			l, ok, err := auditlog.GetLog(tx.Tx, lv.tid, suffix)
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
	moved := 0
	err = lv.v.update(ctx, func(tx *txn) error {
		for _, l := range lines {
			if l.typ != EntityCard || moved == 3 {
				continue
			}
			if err := tx.Delete(auditlog.IndexKey(lv.tid, EntityCard, card.ID, l.suffix)); err != nil {
				return err
			}
			if err := tx.PutIndex(barrier.Tenant(lv.tid).LogEntityIndex(EntityCard, card.ID).Key(l.suffix)); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	if err != nil || moved != 3 {
		t.Fatalf("moved %d lines to the legacy index: %v", moved, err)
	}

	from, to := lv.now().Add(-6*time.Second), lv.now().Add(-2*time.Second)
	ranges := [][2]*time.Time{{nil, nil}, {&from, nil}, {nil, &to}, {&from, &to}}
	err = lv.v.view(ctx, func(tx *txn) error {
		for _, typ := range []string{EntityCard, EntityToken, EntityApplication, "spaceship"} {
			for _, r := range ranges {
				after, before := auditlog.RangeBounds(r[0], r[1])
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
								data, p, err := auditlog.TypeLogPage(tx.Tx, lv.tid, typ, r[0], r[1], pg, budget, few)
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
								data, _, err := auditlog.TypeLogPage(tx.Tx, lv.tid, typ, r[0], r[1], paging.Pager{Page: page, Size: size}, budget, few)
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
