package sessions

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
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
//     the Vault's ratelimit.go); another address has its own bucket;
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
	// DefaultMax is Options.Limits.MaxPendingSessionsPerApplication's
	// zero value: the live sessions one public application may have waiting
	// for authorization; past it new ones are refused (RateLimited), none
	// evicted.
	DefaultMax = 10000
	// DefaultMaxPerAddress is
	// Options.Limits.MaxPendingSessionsPerAddress's zero value: the live sessions
	// of one public application created from one client address that may
	// wait for authorization before that address's oldest is evicted.
	DefaultMaxPerAddress = 100
)

// msgEvicted is the log line of a waiting session evicted by its
// address's cap.
const msgEvicted = "Session evicted: too many waiting for authorization from its address"

// errCeiling refuses a session past its application's ceiling.
func errCeiling(retryAfter time.Duration) *unit.Error {
	return ratelimit.Error("creating sessions: this application has too many waiting for authorization; "+
		"they are authorized or expire", retryAfter)
}

// makeRoom makes room for a new waiting session of public application
// appID, created from the address named addr: the address's own oldest
// waiting session is evicted when the address is at its cap; else the
// creation is refused (RateLimited) when the application is at its
// ceiling. No other address's session is ever evicted
// (ratelimit.MakeRoom).
func (s *Service) makeRoom(t *unit.Tx, tid, appID, addr string) error {
	return ratelimit.MakeRoom(t, t.Now, barrier.PendingSessionCaps, tid, appID, addr, s.MaxPerAddress, s.Max,
		func(entry barrier.Key, id string) error {
			var rec Record
			ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntitySession, id), &rec)
			if err != nil {
				return err
			}
			if !ok || rec.NonceHash == nil {
				// A stale entry (its session gone or authorized): drop it.
				return t.Delete(entry)
			}
			return Delete(t, unit.SystemActor, &rec, msgEvicted)
		},
		func(retryAfter time.Duration) error { return errCeiling(retryAfter) })
}
