package listing

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// BenchmarkPage times pages of the lists alone (listing/behaviour's
// BenchmarkTokenList times ListTokens, which also authorizes, opens the
// records and logs the reads): 2,000 tokens over 4 container shapes and
// a few cards, on a memory store, 20 a page, with the records read from
// memory, so that what is measured is the registry scan, the counts and
// the merged walk.
func BenchmarkPage(b *testing.B) {
	f := newFixture(b)
	const total, shapes = 2000, 4
	err := f.work.Update(context.Background(), func(tx *unit.Tx) error {
		for i := range total {
			rec := &tokens.Record{ID: fmt.Sprintf("tok-%06d", i), TenantID: testTenant, Type: unit.TypeToken,
				Containers: []string{fmt.Sprintf("/customers/%04d/", i%shapes)},
				CreatedAt:  time.Date(2026, 1, 1, 0, 0, 0, i, time.UTC)}
			if i%500 == 0 {
				rec.Type, rec.Containers = unit.TypeCard, []string{"/"}
			}
			f.recs[rec.ID] = rec
			if err := f.lists.List(tx, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	show := func(rec *tokens.Record) *string { return &rec.ID }
	for _, bc := range []struct {
		name string
		q    Query
		want int
	}{
		{"first", Query{}, 20},
		{"type-card", Query{Type: unit.TypeCard}, total / 500},
		{"type-bank-none", Query{Type: unit.TypeBank}, 0},
		{"container-one", Query{Container: "/customers/0001/"}, 20},
		{"container-all", Query{Container: "/customers/"}, 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := f.work.View(context.Background(), func(tx *unit.Tx) error {
					p, err := Page(f.lists, tx, reader, "token:read", bc.q, paging.Pager{Page: 1, Size: 20}, show)
					if err == nil && len(p.Data) != bc.want {
						b.Fatalf("%d tokens, want %d", len(p.Data), bc.want)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
