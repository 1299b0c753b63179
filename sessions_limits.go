package tokenvault

import (
	"encoding/hex"

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
// so they hold across instances that share a store (limits_caps.go, which
// caps token intents the same way). An evicted session is
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
// indexes (of sessions and token intents): a keyed MAC of its throttle
// address, 128 bits in hex. In-process callers without an address share
// one name.
func (t *txn) pendingAddress() string {
	addr := throttleAddress(callInfoOf(t.ctx).ClientAddress)
	return hex.EncodeToString(t.v.sys.MAC([]byte("pending-session-address\x00"), []byte(addr))[:16])
}

// makeRoomForSession evicts what a new waiting session of public
// application appID, created from the address named addr, would put over
// the caps (limits_caps.go).
func (t *txn) makeRoomForSession(tid, appID, addr string) error {
	return t.makeRoom(barrier.PendingSessionCaps, tid, appID, addr, t.v.maxPendingPerAddress, t.v.maxPendingSessions,
		func(entry barrier.Key, id string) error {
			var rec sessionRecord
			ok, err := t.getRecord(barrier.Tenant(tid).Record(EntitySession, id), &rec)
			if err != nil {
				return err
			}
			if !ok || rec.NonceHash == nil {
				// A stale entry (its session gone or authorized): drop it.
				return t.Delete(entry)
			}
			return t.deleteSession(systemActor, &rec, "Session evicted: too many waiting for authorization")
		})
}
