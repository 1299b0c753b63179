package events

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestSubscriptionCacheHoldsNoSecret: what the cache keeps of a tenant's
// webhooks carries neither signing secret, and the cache has an entry
// for a tenant without webhooks after its first read; a webhook change
// moves the generation on, so the entry is not served again.
func TestSubscriptionCacheHoldsNoSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	ctx, tid := context.Background(), p.TenantID
	read := func() {
		t.Helper()
		if err := h.work.Update(ctx, func(tx *unit.Tx) error { _, err := h.svc.Subscriptions(tx, tid); return err }); err != nil {
			t.Fatal(err)
		}
	}
	cache := h.svc.Dispatch.Subscriptions()
	read()
	if hooks, ok := cache.Get(tid, h.work.Generation()); !ok || len(hooks) != 0 {
		t.Fatalf("a tenant without webhooks: cached %v, %v; want an empty entry", hooks, ok)
	}
	h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{TokenCreated},
		NotifyEmail: "ops@example.com"})
	if _, ok := cache.Get(tid, h.work.Generation()); ok {
		t.Fatal("the entry survived a webhook change")
	}
	read()
	hooks, ok := cache.Get(tid, h.work.Generation())
	if !ok || len(hooks) != 1 {
		t.Fatalf("cached %v, %v; want the tenant's webhook", hooks, ok)
	}
	if w := hooks[0]; w.Secret != "" || w.PreviousSecret != "" || w.URL != "" || w.NotifyEmail != "" || len(w.Events) != 1 || w.Status != Enabled {
		t.Errorf("cached %+v, want id, status and events only", *w)
	}
}

// TestChangedUnitReadsTheStore: a unit of work that changed what the
// generation covers neither serves a cached entry nor stores one: it
// reads the tenant's webhooks from the store.
func TestChangedUnitReadsTheStore(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	ctx, tid := context.Background(), p.TenantID
	cache := h.svc.Dispatch.Subscriptions()
	gen := h.work.Generation()
	cache.Put(tid, gen, []*Webhook{{ID: "stale", Status: Enabled, Events: []string{"*"}}})
	err := h.work.Update(ctx, func(tx *unit.Tx) error {
		tx.MarkAuthChanged()
		hooks, err := h.svc.Subscriptions(tx, tid)
		if len(hooks) != 0 {
			t.Errorf("a unit of work that changed identities was served %v", hooks)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if hooks, ok := cache.Get(tid, gen); !ok || len(hooks) != 1 || hooks[0].ID != "stale" {
		t.Errorf("the entry under generation %d is now %v, %v: the unit of work stored what it read", gen, hooks, ok)
	}
}
