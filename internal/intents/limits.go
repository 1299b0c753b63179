package intents

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Caps on live token intents.
//
// Every public application may create token intents (that is what they
// are for), and its key is in every browser, so in an attacker's hands
// too; an intent lives up to MaxLifetime. The live intents of
// one creator (the application or session whose key created them) are
// capped so that no caller can remove, or crowd out, another's:
//
//   - per caller: at most Options.Limits.MaxPendingTokenIntentsPerAddress
//     live intents of one creator from one client address
//     (CallInfo.ClientAddress, an IPv6 address by its /64 as for rate
//     limits; in-process callers without one share one budget). A
//     creation past that evicts the address's own oldest live intent: a
//     flood from one address only ever replaces its own intents, and one
//     address holds at most its share of the creator's budget;
//   - per creator: at most Options.Limits.MaxPendingTokenIntentsPerApplication
//     live intents in all. A creation that would pass it, from an address
//     not at its own cap, is refused (RateLimited: 429 with Retry-After,
//     the time until the creator's oldest intent expires), never made by
//     evicting: evicting the creator's oldest let a flood from many
//     addresses push out a victim's pending intents, a defence one caller
//     could turn against others. The ceiling bounds storage; it is reached
//     only by more than ceiling/per-address distinct addresses at once
//     (100 with the defaults), and then no pending intent is lost: new
//     ones wait for intents to be converted, deleted or expire.
//
// "Oldest" is the one expiring first. An evicted intent is deleted with
// its data in the creation's transaction and the deletion is logged
// ("Token intent evicted"): reading, deleting or converting it is then
// NotFound, as for any intent gone. Converted, deleted and expired
// intents leave the indexes with their record, so they never count.
// Sessions waiting for authorization are capped the same way
// (internal/sessions, ratelimit.MakeRoom).

// Defaults of the token intent caps.
const (
	// DefaultMax is
	// Options.Limits.MaxPendingTokenIntentsPerApplication's zero value: the
	// live intents one application or session may have; past it new ones
	// are refused (RateLimited), none evicted.
	DefaultMax = 10000
	// DefaultMaxPerAddress is
	// Options.Limits.MaxPendingTokenIntentsPerAddress's zero value: the
	// live intents one application or session may have created from one
	// client address before that address's oldest is evicted.
	DefaultMaxPerAddress = 100
)

// msgEvicted is the log line of an intent evicted by a cap.
const msgEvicted = "Token intent evicted: too many live for its creator and address"

// errCeiling refuses an intent past its creator's ceiling.
func errCeiling(retryAfter time.Duration) *unit.Error {
	return ratelimit.Error("creating token intents: this application has too many live; "+
		"they are converted, deleted or expire", retryAfter)
}

// makeRoom makes room for a new intent of tenant tid, created by creator
// from the address named addr: the address's own oldest live intent is
// evicted when the address is at its cap; else the creation is refused
// (RateLimited) when the creator is at its ceiling. No other caller's
// intent is ever evicted.
func (s *Service) makeRoom(t *unit.Tx, tid, creator, addr string) error {
	evict := func(entry barrier.Key, id string) error {
		rec, err := Get(t, tid, id)
		if err != nil {
			return err
		}
		if rec == nil {
			// A stale entry (its intent gone): drop it.
			return t.Delete(entry)
		}
		return Delete(t, unit.SystemActor, rec, msgEvicted)
	}
	return ratelimit.MakeRoom(t, t.Now, barrier.TokenIntentCaps, tid, creator, addr, s.MaxPerAddress, s.Max,
		evict, func(retryAfter time.Duration) error { return errCeiling(retryAfter) })
}
