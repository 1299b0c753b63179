package events

import (
	"strconv"
	"testing"
)

// TestSubscriptionCacheBounded: the cache keeps at most
// MaxSubscriptionTenants tenants, dropping the one used least recently,
// and serves an entry only under the generation it was read in.
func TestSubscriptionCacheBounded(t *testing.T) {
	t.Parallel()
	var c SubscriptionCache
	hot := "tenant-hot"
	c.Put(hot, 1, nil)
	for i := range MaxSubscriptionTenants + 100 {
		c.Put("tenant-"+strconv.Itoa(i), 1, []*Webhook{{ID: "h"}})
		if i%1000 == 0 {
			if _, ok := c.Get(hot, 1); !ok { // in use: kept
				t.Fatalf("after %d tenants the tenant in use was dropped", i)
			}
		}
	}
	if n := c.Len(); n != MaxSubscriptionTenants {
		t.Fatalf("%d tenants cached, want at most %d", n, MaxSubscriptionTenants)
	}
	if _, ok := c.Get("tenant-0", 1); ok {
		t.Error("the tenant used least recently is still cached")
	}
	if _, ok := c.Get(hot, 2); ok {
		t.Error("an entry read under generation 1 served under generation 2")
	}
}
