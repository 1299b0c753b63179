package tokenvault

import (
	"context"
	"strconv"
	"testing"

	"github.com/tokenvault/tokenvault/internal/events"
)

// TestSubscriptionCacheBounded: the cache keeps at most
// maxSubscriptionTenants tenants, dropping the one used least recently,
// and serves an entry only under the generation it was read in.
func TestSubscriptionCacheBounded(t *testing.T) {
	t.Parallel()
	var c subscriptionCache
	hot := "tenant-hot"
	c.put(hot, 1, nil)
	for i := range maxSubscriptionTenants + 100 {
		c.put("tenant-"+strconv.Itoa(i), 1, []*events.Webhook{{ID: "h"}})
		if i%1000 == 0 {
			if _, ok := c.get(hot, 1); !ok { // in use: kept
				t.Fatalf("after %d tenants the tenant in use was dropped", i)
			}
		}
	}
	if n := c.len(); n != maxSubscriptionTenants {
		t.Fatalf("%d tenants cached, want at most %d", n, maxSubscriptionTenants)
	}
	if _, ok := c.get("tenant-0", 1); ok {
		t.Error("the tenant used least recently is still cached")
	}
	if _, ok := c.get(hot, 2); ok {
		t.Error("an entry read under generation 1 served under generation 2")
	}
}

// TestSubscriptionCacheHoldsNoSecret: what the cache keeps of a tenant's
// webhooks carries neither signing secret, and the cache has an entry
// for a tenant without webhooks after its first call.
func TestSubscriptionCacheHoldsNoSecret(t *testing.T) {
	t.Parallel()
	v, _, boot := webhookVault(t)
	ctx := context.Background()
	tid := boot.Tenant.ID
	if err := v.update(ctx, func(t *txn) error { _, err := t.subscriptions(tid); return err }); err != nil {
		t.Fatal(err)
	}
	gen := v.auth.gen.Load()
	if hooks, ok := v.dispatch.subscriptions.get(tid, gen); !ok || len(hooks) != 0 {
		t.Fatalf("a tenant without webhooks: cached %v, %v; want an empty entry", hooks, ok)
	}
	if _, _, err := PutTestWebhook(ctx, v, tid, []string{EventTokenCreated}, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.dispatch.subscriptions.get(tid, v.auth.gen.Load()); ok {
		t.Fatal("the entry survived a webhook change")
	}
	if err := v.update(ctx, func(t *txn) error { _, err := t.subscriptions(tid); return err }); err != nil {
		t.Fatal(err)
	}
	hooks, ok := v.dispatch.subscriptions.get(tid, v.auth.gen.Load())
	if !ok || len(hooks) != 1 {
		t.Fatalf("cached %v, %v; want the tenant's webhook", hooks, ok)
	}
	if h := hooks[0]; h.Secret != "" || h.PreviousSecret != "" || h.URL != "" || len(h.Events) != 1 || h.Status != WebhookEnabled {
		t.Errorf("cached %+v, want id, status and events only", *h)
	}
}
