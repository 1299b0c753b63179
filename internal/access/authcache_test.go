package access

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"
)

// principal stands for the root's principal: the cache keeps whatever
// the root resolves a key to.
type principal struct{ tenantID string }

// testCache wraps an AuthCache with a get that returns nil on a miss, as
// the root reads it.
type testCache struct{ *AuthCache[*principal] }

func newTestCache() testCache { return testCache{NewAuthCache[*principal](false, MaxAuthEntries)} }

func (c testCache) get(mac []byte, gen uint64, now time.Time) *principal {
	p, _ := c.Get(mac, gen, now)
	return p
}

// testMAC is a distinct key MAC for each i.
func testMAC(i int) []byte {
	sum := sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))
	return sum[:]
}

// TestAuthCacheKeepsHotKeysAmong20000 runs 20,000 active keys through the
// cache, twice its bound, with 100 hot keys used between every 10 others,
// as authenticate does (a miss reads the store and puts). The hot keys
// never miss after their first use, and the cache holds no more than its
// bound. A map cleared whole when full dropped the hot keys with the rest.
func TestAuthCacheKeepsHotKeysAmong20000(t *testing.T) {
	const hot, active = 100, 20000
	c := newTestCache()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &principal{}
	use := func(mac []byte) (miss bool) {
		if c.get(mac, 0, now) != nil {
			return false
		}
		c.Put(mac, 0, p, time.Time{})
		return true
	}
	for i := range hot {
		use(testMAC(i))
	}
	hotMisses, coldMisses := 0, 0
	for i := hot; i < hot+active; i++ {
		if use(testMAC(i)) {
			coldMisses++
		}
		if i%10 == 0 {
			for h := range hot {
				if use(testMAC(h)) {
					hotMisses++
				}
			}
		}
	}
	if hotMisses != 0 {
		t.Errorf("hot keys missed %d times among %d active keys, want 0", hotMisses, active)
	}
	if coldMisses != active {
		t.Errorf("%d misses for %d keys used once each", coldMisses, active)
	}
	if n := c.Len(); n != MaxAuthEntries {
		t.Errorf("cache holds %d entries after %d keys, want its bound %d", n, hot+active, MaxAuthEntries)
	}
}

// TestAuthCacheDropsExpiredEntries checks an entry is served up to its
// key's expiry, not at it, and is then dropped, not kept until evicted.
func TestAuthCacheDropsExpiredEntries(t *testing.T) {
	c := newTestCache()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &principal{}
	c.Put(testMAC(1), 7, p, now.Add(time.Minute))
	c.Put(testMAC(2), 7, p, time.Time{})
	if c.get(testMAC(1), 7, now.Add(time.Minute-1)) != p {
		t.Fatal("entry not served before its expiry")
	}
	if c.get(testMAC(1), 7, now.Add(time.Minute)) != nil {
		t.Fatal("entry served at its expiry")
	}
	if n := c.Len(); n != 1 {
		t.Fatalf("cache holds %d entries after one expired, want 1", n)
	}
	if c.get(testMAC(2), 7, now.Add(100*365*24*time.Hour)) != p {
		t.Fatal("entry without expiry not served")
	}
}

// TestAuthCacheServesOnlyItsGeneration checks an entry is served only to
// a lookup under the generation it was read in, before and after being
// overwritten, and that a MAC of another length is never cached.
func TestAuthCacheServesOnlyItsGeneration(t *testing.T) {
	c := newTestCache()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	old, cur := &principal{tenantID: "old"}, &principal{tenantID: "new"}
	c.Put(testMAC(1), 1, old, time.Time{})
	if c.get(testMAC(1), 2, now) != nil {
		t.Fatal("entry of generation 1 served under generation 2")
	}
	c.Put(testMAC(1), 2, cur, time.Time{})
	if c.get(testMAC(1), 1, now) != nil || c.get(testMAC(1), 2, now) != cur {
		t.Fatal("overwritten entry not served under its own generation only")
	}
	c.Put([]byte("short"), 2, cur, time.Time{})
	if c.get([]byte("short"), 2, now) != nil {
		t.Fatal("a MAC that is not an HMAC-SHA256 was cached")
	}
}
