package events

import (
	"slices"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// SubscriptionCache keeps, per tenant, what emit needs of its webhooks
// (id, status, events; never a secret: SubscriptionOf), each entry under
// the generation it was read at, so that a commit reads none of them
// while the entry holds. subscriptions_read.go says which
// generation an entry is served and stored under, and when a
// transaction may use the cache at all. The entries are a
// least-recently-used cache of MaxSubscriptionTenants tenants: its memory
// is bounded however many tenants are active. Safe for concurrent use.
type SubscriptionCache struct {
	once    sync.Once
	entries *lru.Cache[string, subscriptionEntry] // made by cache
}

// subscriptionEntry is a tenant's webhooks as read under generation gen.
type subscriptionEntry struct {
	gen   uint64
	hooks []*Webhook // SubscriptionOf each: no secrets
}

// MaxSubscriptionTenants bounds the cache; when full, the tenant whose
// entry was used least recently makes room.
const MaxSubscriptionTenants = 10000

// cache returns the entries, making them on first use.
func (c *SubscriptionCache) cache() *lru.Cache[string, subscriptionEntry] {
	c.once.Do(func() {
		c.entries, _ = lru.New[string, subscriptionEntry](MaxSubscriptionTenants) // errs only for a size <= 0
	})
	return c.entries
}

// Get returns tenant tid's webhooks cached under generation gen.
func (c *SubscriptionCache) Get(tid string, gen uint64) ([]*Webhook, bool) {
	e, ok := c.cache().Get(tid)
	if !ok || e.gen != gen {
		return nil, false
	}
	return e.hooks, true
}

// Put caches hooks, read under generation gen, as tenant tid's.
func (c *SubscriptionCache) Put(tid string, gen uint64, hooks []*Webhook) {
	c.cache().Add(tid, subscriptionEntry{gen: gen, hooks: hooks})
}

// Len is how many tenants have an entry.
func (c *SubscriptionCache) Len() int { return c.cache().Len() }

// SubscriptionOf is what emit and the pending caps need of h: its
// tenant, id, status and events, and none of its secrets, which the
// cache must not hold.
func SubscriptionOf(h *Webhook) *Webhook {
	return &Webhook{ID: h.ID, TenantID: h.TenantID, Status: h.Status, Events: slices.Clone(h.Events)}
}
