package tokenvault

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// authCache remembers the principals of keys seen recently, so the hot
// path (a key used again and again) reads nothing from the store to
// authenticate.
//
// It keeps the spec's promise that a regenerated, deleted or expired key is
// refused at once:
//   - every transaction that writes an API key lookup, an application or a
//     session marks itself, and after it commits the cache's generation
//     moves on, which voids every entry (changes to keys are rare);
//   - an entry is stored with the generation read before its transaction
//     began (bbolt takes a read snapshot when View begins, before any of
//     the Vault's code runs, so a generation read later could postdate the
//     snapshot and bless a key revoked in between),
//     so a principal read from a snapshot older than a change is never
//     served after that change is acknowledged;
//   - an entry carries its key's expiry and is not served from then on.
//
// Across processes a generation cannot be shared without a store read, so
// the cache is enabled only on stores that one process holds exclusively
// (memory, and bbolt, whose file is locked by its opener). Vaults sharing a
// PostgreSQL store authenticate from the store every time.
type authCache struct {
	enabled bool
	gen     atomic.Uint64

	mu      sync.RWMutex
	entries map[string]authEntry
}

type authEntry struct {
	p       *principal
	gen     uint64
	expires time.Time // zero: never
}

// maxAuthEntries bounds the cache; when full it starts over.
const maxAuthEntries = 10000

func (c *authCache) get(mac []byte, now time.Time) *principal {
	if !c.enabled {
		return nil
	}
	c.mu.RLock()
	e, ok := c.entries[string(mac)]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || (!e.expires.IsZero() && !now.Before(e.expires)) {
		return nil
	}
	return e.p
}

func (c *authCache) put(mac []byte, gen uint64, p *principal, expires time.Time) {
	if !c.enabled {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxAuthEntries {
		c.entries = make(map[string]authEntry)
	}
	c.entries[string(mac)] = authEntry{p: p, gen: gen, expires: expires}
}

// invalidate voids every entry.
func (c *authCache) invalidate() { c.gen.Add(1) }

// touchesAuth reports whether writing key can change what a key
// authenticates as.
func touchesAuth(key string) bool {
	if strings.HasPrefix(key, sysAPIKeyKey) {
		return true
	}
	if !strings.HasPrefix(key, "tenant/") {
		return false
	}
	_, rest, _ := strings.Cut(key[len("tenant/"):], "/")
	return strings.HasPrefix(rest, EntityApplication+"/") || strings.HasPrefix(rest, EntitySession+"/")
}
