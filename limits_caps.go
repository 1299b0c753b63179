package tokenvault

import (
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Caps on what a public key may leave in the store.
//
// Sessions waiting for authorization (sessions_limits.go) and live token
// intents (intents_limits.go) are created by keys that live in browsers,
// so in an attacker's hands too. Each is capped the same way, counted in
// the store in the creation's own transaction (so the caps hold across
// instances sharing a store): per creator and client address, and per
// creator. A creation at a cap is never refused: it evicts the oldest
// live entry (the one expiring first) of the same address, else of the
// creator, so a flood from one address only ever replaces its own, and
// storage stays bounded when many addresses flood at once.

// capOrDefault is a cap option's value: def for zero, as given else
// (negative: no cap).
func capOrDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// makeRoom evicts what one more object of family f in tenant tid, created
// by creator from the address named addr, would put over the caps
// perAddress and perCreator (0 or less: none): the address's oldest live
// object when the address is at its cap, else the creator's oldest when
// the creator is at its cap. Either way the new object replaces one, so
// the counts stay within the caps. evict removes the object id that
// entry indexes, with its index entries and a log line; or, when the
// object is gone (a stale entry), the entry alone.
func (t *txn) makeRoom(f barrier.CapFamily, tid, creator, addr string, perAddress, perCreator int, evict func(entry barrier.Key, id string) error) error {
	if perAddress > 0 {
		evicted, err := t.evictOldestLive(barrier.Tenant(tid).ByAddress(f, creator, addr), perAddress, evict)
		if err != nil || evicted {
			return err
		}
	}
	if perCreator > 0 {
		_, err := t.evictOldestLive(barrier.Tenant(tid).ByCreator(f, creator), perCreator, evict)
		return err
	}
	return nil
}

// evictOldestLive evicts the first live object indexed under prefix when
// there are limit or more, and reports whether it did.
func (t *txn) evictOldestLive(prefix barrier.Prefix, limit int, evict func(barrier.Key, string) error) (bool, error) {
	// Entries expiring at or before now are expired (the sweeper removes
	// them): start past them.
	after := barrier.TimeKey(t.now) + "/~"
	count := 0
	var first barrier.Key
	var firstRest string
	err := t.Scan(prefix, after, limit, func(k barrier.Key, rest string) error {
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
