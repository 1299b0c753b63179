package intents

import "github.com/tokenvault/tokenvault/internal/unit"

// ExpiryKind is the sweeper's handler of the token intents' schedule
// entries: an expired intent is deleted as Delete deletes it, by the
// system.
var ExpiryKind = unit.ExpiryKind{Kind: unit.EntityTokenIntent, Swept: "token_intent", Expire: expire}

// expire deletes tenant tid's token intent id if it has expired, and
// reports whether it did.
func expire(t *unit.Tx, tid, id string) (bool, error) {
	rec, err := Get(t, tid, id)
	if err != nil || rec == nil || !rec.Expired(t.Now) {
		return false, err
	}
	return true, Delete(t, unit.SystemActor, rec, "Token intent expired")
}
