package events

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// The harness of the Service's tests: a Service over a unit of work on a
// new memory store (internal/unit/worktest), as the Vault's Open makes
// it, with a clock the test moves (h.work.Advance), an identity
// generation that moves when a unit of work changes what it covers (as
// the Vault's auth cache's does), and the audit lines kept in memory.

// harness is a Service and what it runs on.
type harness struct {
	svc  *Service
	work *worktest.Work
}

// newHarness makes a Service whose webhooks have a secret overlap of an
// hour, on a clock the test moves.
func newHarness(t *testing.T) *harness {
	t.Helper()
	w := worktest.New(t)
	ids := new(unit.IDSource)
	svc := &Service{IDs: ids, Policy: outbound.Policy{}, Counts: worktest.Counts, Result: func(err error) error { return err },
		Gens:      func(t *unit.Tx) (uint64, uint64, bool, error) { return w.Generation(), t.AuthGen, true, nil },
		CheckName: func(name string, fe unit.FieldErrors) { unit.CheckNoControl("name", name, fe) }}
	svc.Dispatch = NewDispatcher(Config{Options: Options{SecretOverlap: time.Hour}, Now: w.Now, IDs: ids, Work: w.Work,
		TenantGone: unit.NotFoundError("tenant"), Subscriptions: svc.Subscriptions})
	// The Service queues the events, not the Work's recorder.
	w.EmitEventsWith(svc)
	return &harness{svc: svc, work: w}
}

// tenant writes the keyring of a new tenant and returns the principal of
// a management application of it.
func (h *harness) tenant(t *testing.T, tid string) *access.Principal {
	t.Helper()
	h.work.Tenant(t, tid)
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
