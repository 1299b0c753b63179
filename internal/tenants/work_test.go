package tenants

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// plainWrapper leaves keyrings unwrapped: these tests are about which
// keys are written and deleted, not about sealing.
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

// newWork is a unit of work over a new memory store.
func newWork(t *testing.T) *unit.Work {
	w, _ := newWorkOn(t)
	return w
}

// newWorkOn is a unit of work over a new memory store, and the store.
func newWorkOn(t *testing.T) (*unit.Work, *memory.Store) {
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
	return unit.NewWork(b, unit.Options{Now: now, Generation: func() uint64 { return 0 },
		IdentitiesChanged: func() {}, Result: func(err error) error { return err }}), s
}
