package listing

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// testTenant is the tenant of the fixture.
const testTenant = "tenant-1"

// fixture is a unit of work over a memory store with one tenant's
// keyring, and Lists reading the token records the test keeps in recs
// (as the tokens feature would read them from the store).
type fixture struct {
	store *memory.Store
	work  *worktest.Work
	lists *Lists
	recs  map[string]*tokens.Record
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, testTenant)
	f := &fixture{store: w.Store, work: w, recs: map[string]*tokens.Record{}}
	f.lists = &Lists{Load: func(_ *unit.Tx, tid, id string, withExpired bool) (*tokens.Record, error) {
		rec := f.recs[id]
		if rec == nil || rec.TenantID != tid {
			return nil, nil
		}
		return rec, nil
	}}
	return f
}

func (f *fixture) update(t testing.TB, fn func(tx *unit.Tx) error) {
	t.Helper()
	if err := f.work.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) view(t testing.TB, fn func(tx *unit.Tx) error) {
	t.Helper()
	if err := f.work.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// add lists a new token of type typ in containers ("/" when none, as a
// token is placed by default), created at the fixture's i-th second,
// with id id.
func (f *fixture) add(t *testing.T, id, typ string, i int, containers ...string) *tokens.Record {
	t.Helper()
	if len(containers) == 0 {
		containers = []string{"/"}
	}
	rec := &tokens.Record{ID: id, TenantID: testTenant, Type: typ, Containers: containers,
		CreatedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}
	f.recs[id] = rec
	f.update(t, func(tx *unit.Tx) error { return f.lists.List(tx, rec) })
	return rec
}

// dump is every key of the store and its raw value.
func (f *fixture) dump(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := f.store.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
