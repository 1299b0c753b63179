package events

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The harness of the Service's tests: a Service over a unit of work on a
// new memory store, as the Vault's Open makes it, with a clock the test
// moves, an identity generation that moves when a unit of work changes
// what it covers (as the Vault's auth cache's does), and the audit lines
// kept in memory.

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.at = c.at.Add(d) }

// plainWrapper leaves keyrings unwrapped: these tests are not about
// sealing.
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

// auditLines keeps the audit lines the units of work wrote.
type auditLines struct {
	mu    sync.Mutex
	lines []auditchain.Line
}

func (a *auditLines) WriteLine(_ *unit.Tx, _ string, l auditchain.Line) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = append(a.lines, l)
	return nil
}

// harness is a Service and what it runs on.
type harness struct {
	svc   *Service
	work  *unit.Work
	clock *testClock
	gen   *atomic.Uint64
}

// newHarness makes a Service whose webhooks have a secret overlap of an
// hour, on a clock the test moves.
func newHarness(t *testing.T) *harness {
	t.Helper()
	clock := &testClock{at: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	b := barrier.New(barrier.Config{Store: memory.New(), Wrapper: plainWrapper{}, Now: clock.Now,
		TenantGone: unit.NotFoundError("tenant"), Counts: varintCounts{}, Instance: "test"})
	sys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	b.SetSystemKeys(sys)
	t.Cleanup(func() { b.Close() })
	gen := new(atomic.Uint64)
	w := unit.NewWork(b, unit.Options{Now: clock.Now, Generation: gen.Load,
		IdentitiesChanged: func() { gen.Add(1) }, Result: func(err error) error { return err }})
	w.WriteLinesWith(&auditLines{})
	ids := new(unit.IDSource)
	svc := &Service{IDs: ids, Policy: outbound.Policy{}, Counts: varintCounts{}, Result: func(err error) error { return err },
		Gens:      func(t *unit.Tx) (uint64, uint64, bool, error) { return gen.Load(), t.AuthGen, true, nil },
		CheckName: func(name string, fe unit.FieldErrors) { unit.CheckNoControl("name", name, fe) }}
	svc.Dispatch = NewDispatcher(Config{Options: Options{SecretOverlap: time.Hour}, Now: clock.Now, IDs: ids, Work: w,
		TenantGone: unit.NotFoundError("tenant"), Subscriptions: svc.Subscriptions})
	w.EmitEventsWith(svc)
	return &harness{svc: svc, work: w, clock: clock, gen: gen}
}

// tenant writes the keyring of a new tenant and returns the principal of
// a management application of it.
func (h *harness) tenant(t *testing.T, tid string) *access.Principal {
	t.Helper()
	keys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	err = h.work.Update(context.Background(), func(tx *unit.Tx) error {
		tx.CreatedKeys(tid, keys)
		return tx.PutKeyring(barrier.Tenant(tid).Keyring(), keys)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &access.Principal{TenantID: tid, ActorID: "app-" + tid, ActorType: unit.ActorApplication, ActorName: "manager"}
}

// create creates a webhook of p's tenant from req, failing the test on
// an error.
func (h *harness) create(t *testing.T, p *access.Principal, req Request) *Subscription {
	t.Helper()
	var out *Subscription
	err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
		var err error
		out, err = h.svc.Create(tx, p, req, NewSecret())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stored reads webhook id of tenant tid as stored.
func (h *harness) stored(t *testing.T, tid, id string) *Webhook {
	t.Helper()
	var rec *Webhook
	err := h.work.View(context.Background(), func(tx *unit.Tx) error {
		var err error
		rec, err = Get(tx, tid, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
