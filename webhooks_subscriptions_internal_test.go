package tokenvault

import (
	"context"
	"testing"
)

// TestSubscriptionCacheHoldsNoSecret: what the cache keeps of a tenant's
// webhooks carries neither signing secret, and the cache has an entry
// for a tenant without webhooks after its first call.
func TestSubscriptionCacheHoldsNoSecret(t *testing.T) {
	t.Parallel()
	v, _, boot := webhookVault(t)
	ctx := context.Background()
	tid := boot.Tenant.ID
	if err := v.update(ctx, func(t *txn) error { _, err := v.events.Subscriptions(t.Tx, tid); return err }); err != nil {
		t.Fatal(err)
	}
	gen := v.auth.Generation()
	if hooks, ok := v.dispatch.Subscriptions().Get(tid, gen); !ok || len(hooks) != 0 {
		t.Fatalf("a tenant without webhooks: cached %v, %v; want an empty entry", hooks, ok)
	}
	if _, _, err := PutTestWebhook(ctx, v, tid, []string{EventTokenCreated}, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.dispatch.Subscriptions().Get(tid, v.auth.Generation()); ok {
		t.Fatal("the entry survived a webhook change")
	}
	if err := v.update(ctx, func(t *txn) error { _, err := v.events.Subscriptions(t.Tx, tid); return err }); err != nil {
		t.Fatal(err)
	}
	hooks, ok := v.dispatch.Subscriptions().Get(tid, v.auth.Generation())
	if !ok || len(hooks) != 1 {
		t.Fatalf("cached %v, %v; want the tenant's webhook", hooks, ok)
	}
	if h := hooks[0]; h.Secret != "" || h.PreviousSecret != "" || h.URL != "" || len(h.Events) != 1 || h.Status != WebhookEnabled {
		t.Errorf("cached %+v, want id, status and events only", *h)
	}
}
