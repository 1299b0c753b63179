// Package worktest runs a feature package's operations in real units of
// work in its tests: a unit.Work over a new memory store, whose audit
// lines and events are recorded instead of written, with tenants whose
// keyrings exist, a clock the test moves and an identity generation that
// moves as the Vault's does. Features below the root test their moved
// code with it without the Vault (which they may not import).
package worktest

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// Work is a unit.Work for tests, on a clock the test sets (Now).
type Work struct {
	*unit.Work
	// Sys is the barrier's system keyring, for features that MAC with it.
	Sys *barrier.Keys
	// Store is the memory store under it, for tests that look at what
	// was written.
	Store *memory.Store

	gen    atomic.Uint64
	mu     sync.Mutex
	now    time.Time
	lines  []Line
	events []unit.Event
}

// Line is an audit line a unit of work wrote, with its tenant.
type Line struct {
	TenantID string
	auditchain.Line
}

// Start is the time a new Work's clock shows.
var Start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// New returns a Work over a new memory store, closed when the test ends.
func New(t testing.TB) *Work {
	t.Helper()
	w := &Work{now: Start, Store: memory.New()}
	b := barrier.New(barrier.Config{Store: w.Store, Wrapper: plainWrapper{}, Now: w.Now,
		TenantGone: unit.NotFoundError("tenant"), Counts: Counts, Instance: "test"})
	sys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	b.SetSystemKeys(sys)
	t.Cleanup(func() { b.Close() })
	w.Sys = sys
	w.Work = unit.NewWork(b, unit.Options{Now: w.Now, Generation: w.Generation,
		IdentitiesChanged: func() { w.gen.Add(1) }, Result: func(err error) error { return err }})
	// Kept counts are written by every commit, as the Vault's are.
	w.Hook(unit.Hooks{BeforeCommit: func(tx *unit.Tx) error { return tx.FlushCounts() }})
	w.WriteLinesWith(recorder{w})
	w.EmitEventsWith(recorder{w})
	return w
}

// Now is the Work's clock.
func (w *Work) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

// Generation is the Work's identity generation (unit.Options.Generation):
// it moves each time a unit of work that wrote what a key authenticates
// as ends, as the Vault's auth cache's does, so that a feature caching
// identities under it can be tested.
func (w *Work) Generation() uint64 { return w.gen.Load() }

// Advance moves the Work's clock forward by d.
func (w *Work) Advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

// Tenant writes the keyring of tenant tid, so that its records can be
// sealed.
func (w *Work) Tenant(t testing.TB, tid string) {
	t.Helper()
	keys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	err = w.Update(context.Background(), func(tx *unit.Tx) error {
		tx.CreatedKeys(tid, keys)
		return tx.PutKeyring(barrier.Tenant(tid).Keyring(), keys)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Lines returns the audit lines written so far, in order, and forgets
// them. Lines of a run a store discarded are among them: the tests that
// read them run one transaction at a time.
func (w *Work) Lines() []Line {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lines
	w.lines = nil
	return l
}

// Events returns the events emitted so far, in order, and forgets them.
func (w *Work) Events() []unit.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.events
	w.events = nil
	return e
}

// recorder records a Work's lines and events.
type recorder struct{ w *Work }

func (r recorder) WriteLine(_ *unit.Tx, tid string, l auditchain.Line) error {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.w.lines = append(r.w.lines, Line{TenantID: tid, Line: l})
	return nil
}

func (r recorder) Emit(_ *unit.Tx, e unit.Event) error {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.w.events = append(r.w.events, e)
	return nil
}

// plainWrapper leaves keyrings unwrapped: the tests are about what a
// feature writes and removes, not about sealing.
type plainWrapper struct{}

func (plainWrapper) WrapKeys(_ context.Context, _ string, p []byte) ([]byte, error) { return p, nil }
func (plainWrapper) UnwrapKeys(_ context.Context, _ string, r []byte) ([]byte, error) {
	return r, nil
}

// Counts is how a Work stores its kept counts (a varint, unsealed), for
// a feature that reads or writes a count row itself.
var Counts barrier.CountCodec = varintCounts{}

// varintCounts stores a kept count as a varint.
type varintCounts struct{}

func (varintCounts) EncodeCount(_ barrier.Key, n int64) []byte { return binary.AppendVarint(nil, n) }
func (varintCounts) DecodeCount(_ barrier.Key, b []byte) (int64, error) {
	n, _ := binary.Varint(b)
	return n, nil
}
