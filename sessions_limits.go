package tokenvault

import (
	"encoding/hex"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Sessions waiting for authorization.
//
// A public application's key is in every browser that uses it, so whoever
// holds it must not be able to stop the application's other users from
// creating sessions, nor remove the sessions they wait to have
// authorized, and the sessions it creates must not grow the store without
// bound. Three limits do both, and none of them refuses a creation, or
// removes a session, for what other addresses did, short of the ceiling:
//
//   - the sessions one public application creates from one client address
//     are rate limited (Options.Limits.SessionsPerApplication, per instance,
//     ratelimit.go); another address has its own bucket;
//   - one address has at most Options.Limits.MaxPendingSessionsPerAddress live
//     sessions of the application waiting for authorization: a creation
//     past that evicts the address's own oldest waiting session, so a
//     flood from one address only ever replaces its own sessions;
//   - the application has at most Options.Limits.MaxPendingSessionsPerApplication
//     live waiting sessions: a creation that would pass it, from an
//     address not at its own cap, is refused (RateLimited: 429 with
//     Retry-After, the time until the application's oldest waiting session
//     expires), never made by evicting. Evicting the application's oldest
//     let a flood from many addresses push out a victim's session before
//     its backend authorized it, a defence one caller could turn against
//     others. The ceiling bounds storage; it is reached only by more than
//     ceiling/per-address distinct addresses at once (100 with the
//     defaults), and then no waiting session is lost: new ones wait for
//     sessions to be authorized or expire.
//
// Both caps are counted in the store, in the creation's own transaction,
// so they hold across instances that share a store (ratelimit.MakeRoom, which
// caps token intents the same way). An evicted session is
// deleted with its lookups (its nonce is then unknown to AuthorizeSession)
// and the deletion is logged ("Session evicted"). Authorized sessions are
// never evicted: they no longer wait.

// Defaults of the pending-session caps.
const (
	// DefaultMaxPendingSessions is Options.Limits.MaxPendingSessionsPerApplication's
	// zero value: the live sessions one public application may have waiting
	// for authorization; past it new ones are refused (RateLimited), none
	// evicted.
	DefaultMaxPendingSessions = 10000
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
	addr := ratelimit.Address(unit.CallOf(t.Ctx).ClientAddress)
	return hex.EncodeToString(t.v.sys.MAC([]byte("pending-session-address\x00"), []byte(addr))[:16])
}

// msgSessionEvicted is the log line of a waiting session evicted by its
// address's cap.
const msgSessionEvicted = "Session evicted: too many waiting for authorization from its address"

// errSessionCeiling refuses a session past its application's ceiling.
func errSessionCeiling(retryAfter time.Duration) *Error {
	return ratelimit.Error("creating sessions: this application has too many waiting for authorization; "+
		"they are authorized or expire", retryAfter)
}

// makeRoomForSession makes room for a new waiting session of public
// application appID, created from the address named addr: the address's
// own oldest waiting session is evicted when the address is at its cap;
// else the creation is refused (RateLimited) when the application is at
// its ceiling. No other address's session is ever evicted
// (ratelimit.MakeRoom).
func (t *txn) makeRoomForSession(tid, appID, addr string) error {
	return ratelimit.MakeRoom(t.Tx, t.Now, barrier.PendingSessionCaps, tid, appID, addr, t.v.maxPendingPerAddress, t.v.maxPendingSessions,
		func(entry barrier.Key, id string) error {
			var rec sessions.Record
			ok, err := t.GetRecord(barrier.Tenant(tid).Record(EntitySession, id), &rec)
			if err != nil {
				return err
			}
			if !ok || rec.NonceHash == nil {
				// A stale entry (its session gone or authorized): drop it.
				return t.Delete(entry)
			}
			return t.deleteSession(systemActor, &rec, msgSessionEvicted)
		},
		func(retryAfter time.Duration) error { return errSessionCeiling(retryAfter) })
}
