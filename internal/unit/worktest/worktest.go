// Package worktest makes a unit of work over a memory store for the tests
// of feature packages, which need transactions (unit.Tx) without the
// Vault: keyrings unwrapped, kept counts flushed at commit as the Vault's
// commits flush them, a fixed clock. It is imported by tests only.
package worktest

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// Now is the clock of every unit of work New makes.
func Now() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

// New returns a unit of work over a new memory store, and the store. The
// barrier is closed when the test ends.
func New(t testing.TB) (*unit.Work, *memory.Store) {
	t.Helper()
	s := memory.New()
	b := barrier.New(barrier.Config{Store: s, Wrapper: plainWrapper{}, Now: Now,
		TenantGone: unit.NotFoundError("tenant"), Counts: varintCounts{}, Instance: "test"})
	sys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	b.SetSystemKeys(sys)
	t.Cleanup(func() { b.Close() })
	w := unit.NewWork(b, unit.Options{Now: Now, Generation: func() uint64 { return 0 },
		IdentitiesChanged: func() {}, Result: func(err error) error { return err }})
	w.Hook(unit.Hooks{BeforeCommit: func(tx *unit.Tx) error { return tx.FlushCounts() }})
	return w, s
}

// Tenant gives tenant tid a keyring in w, so that its records can be
// sealed and its keyed MACs taken.
func Tenant(t testing.TB, w *unit.Work, tid string) {
	t.Helper()
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		ks, err := barrier.NewKeys()
		if err != nil {
			return err
		}
		tx.CreatedKeys(tid, ks)
		return tx.PutKeyring(barrier.Tenant(tid).Keyring(), ks)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// plainWrapper leaves keyrings unwrapped: the tests using worktest are
// not about sealing.
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
