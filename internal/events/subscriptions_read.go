package events

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Cached subscriptions.
//
// Every change that may emit an event asks which of its tenant's webhooks
// subscribe to it (Targets). Reading the tenant's webhook records for
// that in every commit made each tokenize scan them: on PostgreSQL a
// round trip inside the group commit, and a predicate lock on the
// tenant's webhooks that conflicts with any webhook change. So each Vault
// keeps, per tenant, what emit needs of its webhooks (id, status, events;
// never a secret), and a commit reads none of them while the entry holds.
//
// An entry is kept and served under the generation of the Vault's auth
// cache (Service.Gens), which a webhook change advances as a key change
// does: every unit of work that creates, changes, disables or deletes a
// webhook calls Forget, which marks it as auth-changed. Hence:
//
//   - On a store held by one process (memory, bbolt) the Vault's
//     generation moves on before the change's call returns, and no entry
//     read before it is served again.
//   - On a store several processes share with a generation counter
//     (PostgreSQL), the change advances the counter in its own commit, so
//     once its call has returned every Vault's next unit of work reads a
//     newer generation, misses, and reads the tenant's webhooks again: the
//     very next call after a webhook change emits to the new set, on every
//     instance. The generation is read with BEGIN (the auth cache reads it
//     already), so a hit costs no round trip.
//   - On a shared store without a counter nothing is cached: every
//     emitting unit of work reads the webhooks, as before.
//
// A unit of work that has itself changed something under the generation
// (or shares its database transaction with one that has) neither serves
// nor stores an entry: what it reads may not commit.
//
// A tenant without webhooks is an entry too (an empty one), so its calls
// read no webhook record. The cost of a miss is one scan of the tenant's
// webhooks (at most Options.MaxPerTenant records), in the unit of work
// that missed, once per generation. Since the generation is shared with
// the auth cache, an application or session change, or a webhook change,
// makes every tenant miss once; both are rare beside tokenizes. The
// entries are a least-recently-used cache of MaxSubscriptionTenants
// tenants, each bounded by MaxPerTenant webhooks, so their memory is
// bounded however many tenants are active (SubscriptionCache, the
// Dispatcher's).

// Subscriptions returns tenant tid's webhooks as SubscriptionOf gives
// them (enabled or not): read once per unit of work, from the cache when
// an entry of t's generation is there, else from the store (and cached
// when t may). It is the Dispatcher's Config.Subscriptions too.
func (s *Service) Subscriptions(t *unit.Tx, tid string) ([]*Webhook, error) {
	memo := webhooksRead.Of(t)
	if hooks, ok := (*memo)[tid]; ok {
		return hooks, nil
	}
	serve, keep, cached, err := s.subscriptionGens(t)
	if err != nil {
		return nil, err
	}
	cache := s.Dispatch.Subscriptions()
	hooks, ok := []*Webhook(nil), false
	if cached {
		hooks, ok = cache.Get(tid, serve)
	}
	if !ok {
		read, err := TenantWebhooks(t, tid)
		if err != nil {
			return nil, err
		}
		hooks = make([]*Webhook, len(read))
		for i, h := range read {
			hooks[i] = SubscriptionOf(h)
		}
		if cached {
			cache.Put(tid, keep, hooks)
		}
	}
	if *memo == nil {
		*memo = map[string][]*Webhook{}
	}
	(*memo)[tid] = hooks
	return hooks, nil
}

// subscriptionGens is Gens for the subscription cache: a unit of work
// that changed what the generation covers (a webhook, a key) may not use
// the cache either.
func (s *Service) subscriptionGens(t *unit.Tx) (serve, keep uint64, ok bool, err error) {
	if t.AuthChanged() {
		return 0, 0, false, nil
	}
	return s.Gens(t)
}

// webhooksRead memoizes the webhooks a unit of work read, by tenant. A
// unit of work that changes a webhook drops its tenant's entry (Forget).
var webhooksRead = &unit.Local[map[string][]*Webhook]{}

// Forget is called by every unit of work that writes a webhook record of
// tenant tid: it drops what t read of the tenant's webhooks, and marks t
// as changing what the generation covers, so that every Vault's cached
// subscriptions are dropped once t commits (see above). A write that
// changes neither a webhook's status nor its events (rotating its
// secret, noting that it fails) may call it too: it costs one miss per
// tenant.
func Forget(t *unit.Tx, tid string) {
	delete(*webhooksRead.Of(t), tid)
	t.MarkAuthChanged()
}

// TenantWebhooks reads every webhook of tenant tid from the store,
// oldest first.
func TenantWebhooks(t *unit.Tx, tid string) ([]*Webhook, error) {
	vals, err := t.ScanValues(barrier.Tenant(tid).Records(unit.EntityWebhook))
	if err != nil {
		return nil, err
	}
	out := make([]*Webhook, 0, len(vals))
	for _, sv := range vals {
		r := &Webhook{}
		if err := t.OpenRecord(sv.Key, sv.Raw, r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
