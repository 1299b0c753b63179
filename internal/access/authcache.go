package access

import (
	"crypto/sha256"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// AuthCache remembers the principals (P) of keys seen recently, keyed by
// the keys' HMAC-SHA256, so the hot path (a key used again and again)
// reads nothing from the store to authenticate. The root constructs one
// per Vault (NewAuthCache) and decides which generation each transaction
// may serve and keep entries under; the cache only keeps that promise.
//
// Each entry carries the generation under which its principal was read,
// and is served only to a lookup under the same generation, so no entry
// outlives a change to what it was read from once the generation moves.
// On a store one process holds alone (SingleProcess), the generation is
// the cache's own counter (Generation, moved by Invalidate); on a shared
// store the root passes the store's. An entry also carries its key's
// expiry and is not served from then on (the first lookup at or after it
// drops it).
//
// The entries are a least-recently-used cache of a fixed size: a key in
// use stays while keys not used for longest make room, so any number of
// active keys costs at most that many entries, and the hot ones are not
// dropped with the rest (as a map cleared when full would). Not
// golang-lru's expirable package: its expiry runs on the wall clock, not
// the Vault's clock, and each cache starts a goroutine that never ends.
//
// An AuthCache is safe for concurrent use.
type AuthCache[P any] struct {
	singleProcess bool
	gen           atomic.Uint64
	entries       *lru.Cache[[sha256.Size]byte, authEntry[P]]
}

type authEntry[P any] struct {
	p       P
	gen     uint64
	expires time.Time // zero: never
}

// MaxAuthEntries bounds a Vault's cache; when full, the entry used least
// recently makes room.
const MaxAuthEntries = 10000

// NewAuthCache returns an empty cache of at most size entries (size > 0).
// singleProcess says the store is held by this process alone, so that the
// cache's own generation counter is the generation (SingleProcess).
func NewAuthCache[P any](singleProcess bool, size int) *AuthCache[P] {
	entries, err := lru.New[[sha256.Size]byte, authEntry[P]](size)
	if err != nil { // only for a size <= 0
		panic("access: NewAuthCache: " + err.Error())
	}
	return &AuthCache[P]{singleProcess: singleProcess, entries: entries}
}

// SingleProcess reports whether the store is held by this process alone:
// then Generation is the generation entries are kept and served under.
func (c *AuthCache[P]) SingleProcess() bool { return c.singleProcess }

// Generation returns the cache's own generation counter.
func (c *AuthCache[P]) Generation() uint64 { return c.gen.Load() }

// Invalidate moves the generation on, which voids every entry kept under
// an older one.
func (c *AuthCache[P]) Invalidate() { c.gen.Add(1) }

// Get returns the principal cached for mac under generation gen, if any.
// An entry expired at now is dropped: it never becomes valid again.
func (c *AuthCache[P]) Get(mac []byte, gen uint64, now time.Time) (p P, ok bool) {
	if len(mac) != sha256.Size {
		return p, false
	}
	e, ok := c.entries.Get([sha256.Size]byte(mac))
	if !ok {
		return p, false
	}
	if !e.expires.IsZero() && !now.Before(e.expires) {
		c.entries.Remove([sha256.Size]byte(mac))
		return p, false
	}
	if e.gen != gen {
		return p, false
	}
	return e.p, true
}

// Put caches p, read under generation gen, for mac until expires (zero:
// no expiry), making room by dropping the least recently used entry. A
// mac that is not an HMAC-SHA256 is not cached.
func (c *AuthCache[P]) Put(mac []byte, gen uint64, p P, expires time.Time) {
	if len(mac) != sha256.Size {
		return
	}
	c.entries.Add([sha256.Size]byte(mac), authEntry[P]{p: p, gen: gen, expires: expires})
}

// Len reports how many entries the cache holds.
func (c *AuthCache[P]) Len() int { return c.entries.Len() }

// Resize bounds the cache to size entries, dropping the least recently
// used ones beyond it (for tests that exceed the bound with few keys).
func (c *AuthCache[P]) Resize(size int) { c.entries.Resize(size) }
