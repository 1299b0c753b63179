package tokenvault

import (
	"encoding/hex"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Sessions waiting for authorization.
//
// A public application's key is in every browser that uses it, so whoever
// holds it must not be able to stop the application's other users from
// creating sessions, and the sessions it creates must not grow the store
// without bound. Three limits do both, and none of them refuses a
// creation for what other addresses did:
//
//   - the sessions one public application creates from one client address
//     are rate limited (Options.Limits.SessionsPerApplication, per instance,
//     ratelimit.go); another address has its own bucket;
//   - one address has at most Options.Limits.MaxPendingSessionsPerAddress live
//     sessions of the application waiting for authorization: a creation
//     past that evicts the address's own oldest waiting session, so a
//     flood from one address only ever replaces its own sessions;
//   - the application has at most Options.Limits.MaxPendingSessionsPerApplication
//     live waiting sessions: a creation past that evicts the application's
//     oldest waiting session, so storage stays bounded even when many
//     addresses flood at once, and the newest sessions (the ones about to
//     be authorized) are the ones kept.
//
// Both caps are counted in the store, in the creation's own transaction,
// so they hold across instances that share a store. An evicted session is
// deleted with its lookups (its nonce is then unknown to AuthorizeSession)
// and the deletion is logged ("Session evicted"). Authorized sessions are
// never evicted: they no longer wait.

// Defaults of the pending-session caps.
const (
	// DefaultMaxPendingSessions is Options.Limits.MaxPendingSessionsPerApplication's
	// zero value: the live sessions one public application may have waiting
	// for authorization before its oldest is evicted.
	DefaultMaxPendingSessions = 1000
	// DefaultMaxPendingSessionsPerAddress is
	// Options.Limits.MaxPendingSessionsPerAddress's zero value: the live sessions
	// of one public application created from one client address that may
	// wait for authorization before that address's oldest is evicted.
	DefaultMaxPendingSessionsPerAddress = 100
)

// pendingAddress is the name of the caller's address in the per-address
// index: a keyed MAC of its throttle address, 128 bits in hex.
func (t *txn) pendingAddress() string {
	addr := throttleAddress(callInfoOf(t.ctx).ClientAddress)
	return hex.EncodeToString(t.v.sys.MAC([]byte("pending-session-address\x00"), []byte(addr))[:16])
}

// makeRoomForSession evicts what a new waiting session of public
// application appID, created from the address named addr, would put over
// the caps: the address's oldest waiting session when the address is at
// its cap, else the application's oldest when the application is at its
// cap. Either way the new session replaces one, so the counts stay within
// the caps.
func (t *txn) makeRoomForSession(tid, appID, addr string) error {
	if limit := t.v.maxPendingPerAddress; limit > 0 {
		evicted, err := t.evictOldestPending(barrier.Tenant(tid).PendingAddresses(appID, addr), tid, limit)
		if err != nil || evicted {
			return err
		}
	}
	if limit := t.v.maxPendingSessions; limit > 0 {
		_, err := t.evictOldestPending(barrier.Tenant(tid).Index("pending-session").Sub(appID+"/"), tid, limit)
		return err
	}
	return nil
}

// evictOldestPending evicts the first live session indexed under prefix
// (entries <expiry nanos>/<session id>) when there are limit or more, and
// reports whether it did.
func (t *txn) evictOldestPending(prefix barrier.Prefix, tid string, limit int) (bool, error) {
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
	var rec sessionRecord
	ok, err := t.getRecord(barrier.Tenant(tid).Record(EntitySession, id), &rec)
	if err != nil {
		return false, err
	}
	if !ok || rec.NonceHash == nil {
		// A stale entry (its session gone or authorized): drop it.
		return true, t.Delete(first)
	}
	return true, t.deleteSession(systemActor, &rec, "Session evicted: too many waiting for authorization")
}
