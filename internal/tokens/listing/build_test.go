package listing

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// olderStore writes what a store of an earlier version holds: n token
// records of testTenant (unlisted) and 3 of a tenant being deleted, two
// reactor records that nothing counted, and more keys of the lists kept
// before shapes than one build transaction removes. It returns the ids
// of testTenant's tokens, in list order.
func (f *fixture) olderStore(t *testing.T, n int) []string {
	t.Helper()
	const gone = "tenant-gone"
	f.work.Tenant(t, gone)
	f.lists.TenantDeleting = func(_ *unit.Tx, tid string) (bool, error) { return tid == gone, nil }
	var ids []string
	f.update(t, func(tx *unit.Tx) error {
		for _, tid := range []string{testTenant, gone} {
			if err := tx.PutIndex(barrier.Tenant(tid).Registry()); err != nil {
				return err
			}
		}
		for i := range n + 3 {
			rec := &tokens.Record{ID: fmt.Sprintf("tok-%05d", i), TenantID: testTenant, Type: unit.TypeToken,
				Containers: []string{fmt.Sprintf("/c/%d/", i%3)}, Data: []byte(`"x"`),
				CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, i, time.UTC)}
			if i >= n {
				rec.TenantID = gone
			} else {
				f.recs[rec.ID] = rec
				ids = append(ids, rec.ID)
			}
			if err := tx.PutRecord(barrier.Tenant(rec.TenantID).Record(tokens.Kind, rec.ID), rec); err != nil {
				return err
			}
		}
		for _, id := range []string{"r1", "r2"} {
			if err := tx.PutIndex(barrier.Tenant(testTenant).Record(unit.EntityReactor, id)); err != nil {
				return err
			}
		}
		old := barrier.Tenant(testTenant).LegacyTokenLists()
		for i := range BuildBatch + 50 {
			if err := tx.PutIndex(old[0].Key(fmt.Sprintf("token/%08d", i))); err != nil {
				return err
			}
		}
		return tx.PutIndex(old[1].Key("0123456789abcdef"))
	})
	return ids
}

// TestBuildListsAnOlderStore: the build at Open lists every token of a
// store written before the lists by shape once, in transactions of at
// most BuildBatch keys, removes the lists kept before, counts the other
// counted records of a store that never counted them, passes by a tenant
// being deleted, and costs one read once done; a build cut short after
// two transactions goes on from where it stopped, counting each token
// once.
func TestBuildListsAnOlderStore(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut=%v", cut), func(t *testing.T) {
			f := newFixture(t)
			want := f.olderStore(t, BuildBatch+BuildBatch/2)
			if cut {
				// Two transactions: the legacy keys, then the first
				// tokens listed; then a Vault that knows nothing.
				var st, before tokens.ListBuild
				for range 2 {
					f.update(t, func(tx *unit.Tx) error { return f.lists.BuildOnce(tx, &st, &before) })
				}
				if st.Done || st.After == "" {
					t.Fatalf("after two transactions the build is at %+v, want partway through the tokens", st)
				}
				f.lists.Forget()
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			if err := f.lists.Build(context.Background(), f.work.Work, log); err != nil {
				t.Fatal(err)
			}
			if got := f.walk(t, Query{}, 100); !slices.Equal(got, want) {
				t.Errorf("after the build, the list holds %d tokens, want %d", len(got), len(want))
			}
			inC1 := 0
			for _, id := range want {
				if slices.Equal(f.recs[id].Containers, []string{"/c/1/"}) {
					inC1++
				}
			}
			p := f.page(t, Query{Container: "/c/1/"}, paging.Pager{Page: 1, Size: 1})
			if p.Pagination.TotalItems != inC1 {
				t.Errorf("/c/1/ counts %d tokens, want %d: a token counted twice or not at all", p.Pagination.TotalItems, inC1)
			}
			before := f.dump(t)
			for k := range before {
				if strings.Contains(k, "/idx/tl-t/") || strings.Contains(k, "/idx/tl-c/") {
					t.Fatalf("%q: a list key from before shapes is left", k)
				}
				if strings.HasPrefix(k, "tenant/tenant-gone/idx/tl-s/") {
					t.Errorf("%q: a tenant being deleted was listed", k)
				}
			}
			f.view(t, func(tx *unit.Tx) error {
				n, err := tx.ReadCount(barrier.Tenant(testTenant).Count(unit.EntityReactor))
				if err == nil && n != 2 {
					t.Errorf("the reactors' count = %d, want 2", n)
				}
				return err
			})
			// Built: a second build changes nothing.
			if err := f.lists.Build(context.Background(), f.work.Work, log); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(f.dump(t), before) {
				t.Error("a second build wrote to the store")
			}
		})
	}
}
