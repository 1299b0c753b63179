package listing

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// plainWrapper leaves keyrings unwrapped: these tests are about lists,
// not sealing.
type plainWrapper struct{}

func (plainWrapper) WrapKeys(_ context.Context, _ string, p []byte) ([]byte, error) { return p, nil }
func (plainWrapper) UnwrapKeys(_ context.Context, _ string, r []byte) ([]byte, error) {
	return r, nil
}

// varintCounts stores a kept count as a varint.
type varintCounts struct{}

func (varintCounts) EncodeCount(_ barrier.Key, n int64) []byte { return binary.AppendVarint(nil, n) }
func (varintCounts) DecodeCount(_ barrier.Key, b []byte) (int64, error) {
	n, _ := binary.Varint(b)
	return n, nil
}

// testTenant is the tenant of the fixture.
const testTenant = "tenant-1"

// fixture is a unit of work over a memory store with one tenant's
// keyring, and Lists reading the token records the test keeps in recs
// (as the tokens feature would read them from the store).
type fixture struct {
	store *memory.Store
	work  *unit.Work
	lists *Lists
	recs  map[string]*tokens.Record
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	s := memory.New()
	b := barrier.New(barrier.Config{Store: s, Wrapper: plainWrapper{}, Now: now,
		TenantGone: unit.NotFoundError("tenant"), Counts: varintCounts{}, Instance: "test"})
	sys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	b.SetSystemKeys(sys)
	t.Cleanup(func() { b.Close() })
	f := &fixture{
		store: s,
		work: unit.NewWork(b, unit.Options{Now: now, Generation: func() uint64 { return 0 },
			IdentitiesChanged: func() {}, Result: func(err error) error { return err }}),
		recs: map[string]*tokens.Record{},
	}
	// Kept counts land as the Vault's commits write them.
	f.work.Hook(unit.Hooks{BeforeCommit: func(tx *unit.Tx) error { return tx.FlushCounts() }})
	f.lists = &Lists{Load: func(_ *unit.Tx, tid, id string, withExpired bool) (*tokens.Record, error) {
		rec := f.recs[id]
		if rec == nil || rec.TenantID != tid {
			return nil, nil
		}
		return rec, nil
	}}
	f.update(t, func(tx *unit.Tx) error {
		ks, err := barrier.NewKeys()
		if err != nil {
			return err
		}
		tx.CreatedKeys(testTenant, ks)
		return tx.PutKeyring(barrier.Tenant(testTenant).Keyring(), ks)
	})
	return f
}

func (f *fixture) update(t *testing.T, fn func(tx *unit.Tx) error) {
	t.Helper()
	if err := f.work.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) view(t *testing.T, fn func(tx *unit.Tx) error) {
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
