package tokenvault

import "github.com/tokenvault/tokenvault/internal/barrier"

// Caps on live token intents.
//
// Every public application may create token intents (that is what they
// are for), and its key is in every browser, so in an attacker's hands
// too; an intent lives up to MaxTokenIntentLifetime. The live intents are
// capped as the sessions waiting for authorization are (limits_caps.go),
// per creator (the application or session whose key created them):
//
//   - one creator has at most Options.Limits.MaxPendingTokenIntentsPerAddress
//     live intents created from one client address (CallInfo.ClientAddress;
//     in-process callers without one share one budget): a creation past
//     that evicts the address's own oldest live intent, so a flood from one
//     address only ever replaces its own intents;
//   - one creator has at most Options.Limits.MaxPendingTokenIntentsPerApplication
//     live intents: a creation past that evicts the creator's oldest, so
//     storage stays bounded when many addresses flood at once.
//
// "Oldest" is the one expiring first. An evicted intent is deleted with
// its data in the creation's transaction and the deletion is logged
// ("Token intent evicted"): reading, deleting or converting it is then
// NotFound, as for any intent gone. Converted, deleted and expired
// intents leave the indexes with their record, so they never count.

// Defaults of the token intent caps.
const (
	// DefaultMaxPendingTokenIntents is
	// Options.Limits.MaxPendingTokenIntentsPerApplication's zero value: the
	// live intents one application or session may have before its oldest
	// is evicted.
	DefaultMaxPendingTokenIntents = 10000
	// DefaultMaxPendingTokenIntentsPerAddress is
	// Options.Limits.MaxPendingTokenIntentsPerAddress's zero value: the
	// live intents one application or session may have created from one
	// client address before that address's oldest is evicted.
	DefaultMaxPendingTokenIntentsPerAddress = 100
)

// msgIntentEvicted is the log line of an intent evicted by a cap.
const msgIntentEvicted = "Token intent evicted: too many live for its creator and address"

// makeRoomForIntent evicts what a new intent of tenant tid, created by
// creator from the address named addr, would put over the caps.
func (t *txn) makeRoomForIntent(tid, creator, addr string) error {
	return t.makeRoom(barrier.TokenIntentCaps, tid, creator, addr, t.v.maxIntentsPerAddress, t.v.maxIntents,
		func(entry barrier.Key, id string) error {
			rec, err := t.getTokenIntent(tid, id)
			if err != nil {
				return err
			}
			if rec == nil {
				// A stale entry (its intent gone): drop it.
				return t.Delete(entry)
			}
			return t.deleteTokenIntent(systemActor, rec, msgIntentEvicted)
		})
}

// indexKeys are an intent's entries in the indexes of its caps (none
// for an intent written before them).
func (r *tokenIntentRecord) indexKeys() []barrier.Key {
	if r.CreatedFrom == "" {
		return nil
	}
	return barrier.Tenant(r.TenantID).CapEntries(barrier.TokenIntentCaps, r.CreatedBy, r.CreatedFrom, r.ExpiresAt, r.ID)
}
