package ratelimit

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Caps on what a public key may leave in the store.
//
// Sessions waiting for authorization and live token intents are created
// by keys that live in browsers, so in an attacker's hands too. Each is
// capped the same way, counted in the store in the creation's own
// transaction (so the caps hold across instances sharing a store): per
// creator and client address, and per creator. A creation at its
// address's cap evicts that address's own oldest live entry (the one
// expiring first), so a flood from one address only ever replaces its
// own. A creation at the creator's ceiling, from an address under its
// cap, is refused (RateLimited, with the time until the creator's oldest
// entry expires), never made by evicting another address's entry:
// evicting the creator's oldest let a flood from many addresses push out
// a victim's pending entries, a defence one caller could turn against
// others. The ceiling bounds storage.
//
// The indexes are the barrier's (barrier.TenantKeys.ByCreator, ByAddress,
// CapEntries): the feature that owns the objects writes and removes an
// object's entries with it; MakeRoom only reads them, and removes what
// its evict function removes.

// Scanner reads an index in key order: barrier.Tx.Scan (a unit.Tx has
// it), which calls fn with every key under p after p.Key(after), at most
// limit of them.
type Scanner interface {
	Scan(p barrier.Prefix, after string, limit int, fn func(k barrier.Key, rest string) error) error
}

// MakeRoom makes room, in a transaction of time now that reads tx, for
// one more object of family f in tenant tid, created by creator from the
// address named addr: when the address holds perAddress live objects or
// more, its own oldest is evicted (evict removes the object id that entry
// indexes, with its index entries and a log line; or, when the object is
// gone, a stale entry, the entry alone); else, when the creator holds
// ceiling live objects or more, the creation is refused with refuse(the
// time until the creator's oldest expires). 0 or less: no cap. No other
// address's object is ever evicted. Objects expiring at or before now are
// expired (the sweeper removes them) and never count.
func MakeRoom(tx Scanner, now time.Time, f barrier.CapFamily, tid, creator, addr string, perAddress, ceiling int,
	evict func(entry barrier.Key, id string) error, refuse func(retryAfter time.Duration) error) error {
	if perAddress > 0 {
		evicted, err := evictOldestLive(tx, now, barrier.Tenant(tid).ByAddress(f, creator, addr), perAddress, evict)
		if err != nil || evicted {
			return err
		}
	}
	if ceiling > 0 {
		full, oldest, err := atCeiling(tx, now, barrier.Tenant(tid).ByCreator(f, creator), ceiling)
		if err != nil || !full {
			return err
		}
		return refuse(oldest.Sub(now))
	}
	return nil
}

// evictOldestLive evicts the first live object indexed under prefix when
// there are limit or more, and reports whether it did.
func evictOldestLive(tx Scanner, now time.Time, prefix barrier.Prefix, limit int, evict func(barrier.Key, string) error) (bool, error) {
	// Entries expiring at or before now are expired (the sweeper removes
	// them): start past them.
	after := barrier.TimeKey(now) + "/~"
	count := 0
	var first barrier.Key
	var firstRest string
	err := tx.Scan(prefix, after, limit, func(k barrier.Key, rest string) error {
		if count == 0 {
			first, firstRest = k, rest
		}
		count++
		return nil
	})
	if err != nil || count < limit {
		return false, err
	}
	_, id, _ := strings.Cut(firstRest, "/")
	return true, evict(first, id)
}

// atCeiling reports whether limit or more live objects are indexed under
// prefix (entries <expiry>/<id>), and when the first of them expires.
func atCeiling(tx Scanner, now time.Time, prefix barrier.Prefix, limit int) (bool, time.Time, error) {
	after := barrier.TimeKey(now) + "/~"
	count := 0
	var first string
	err := tx.Scan(prefix, after, limit, func(_ barrier.Key, rest string) error {
		if count == 0 {
			first = rest
		}
		count++
		return nil
	})
	if err != nil || count < limit {
		return false, time.Time{}, err
	}
	at, _, _ := strings.Cut(first, "/")
	return true, timeOfKey(at, now.Add(time.Minute)), nil
}

// timeOfKey is the time barrier.TimeKey rendered as k, or def when k is
// not one.
func timeOfKey(k string, def time.Time) time.Time {
	b, err := hex.DecodeString(k)
	if err != nil || len(b) != 8 {
		return def
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
}
