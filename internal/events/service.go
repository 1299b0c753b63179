package events

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Service is the events feature as the Vault uses it: the management of
// webhooks and their deliveries (the Vault's methods authorize the
// caller, then call it in their unit of work), and the EventWriter every
// unit of work emits through (Emit; the Vault's Open registers it with
// unit.Work.EmitEventsWith). It is made once by Open, its Dispatch set
// before any unit of work runs; it is safe for concurrent use.
type Service struct {
	// IDs makes the ids of webhooks and events.
	IDs *unit.IDSource
	// Dispatch is the Vault's dispatcher: its outbox, its caps of pending
	// deliveries, and each tenant's cached subscriptions.
	Dispatch *Dispatcher
	// Policy is the outbound policy a webhook's URL is held to.
	Policy outbound.Policy
	// Counts is the stored form of a kept count, which an object's event
	// sequence counter has too (the barrier's CountCodec).
	Counts barrier.CountCodec
	// Gens returns the generation a cached subscription entry must carry
	// to be served in t, and the one under which what t reads is kept;
	// ok is false when t may not use the cache (the auth cache's
	// generations: subscriptions_read.go says why they are shared).
	Gens func(t *unit.Tx) (serve, keep uint64, ok bool, err error)
	// CheckName checks a webhook's name by the Vault's rules for names,
	// adding its problems to fe under "name".
	CheckName func(name string, fe unit.FieldErrors)
	// Result maps an error met outside a unit of work to what a call
	// returns, as the Vault's units of work do (unit.Options.Result).
	Result func(error) error
	// Tap, when set (by tests, before any call), is told of every event
	// a committed unit of work queued, with its targets.
	Tap func(tid string, ev Outgoing, targets []*Webhook)
}

var _ unit.EventWriter = (*Service)(nil)
