package unit

// Expiry kinds. An object that expires has an entry in the sweeper's
// schedule (barrier's Expiry keys: <nanos>/<tenant>/<kind>/<id>), written
// beside it by the feature that owns it. When the entry is due, the
// sweeper hands it to the handler of its kind, which each feature
// package exports (its ExpiryKind) and the Vault gathers at Open, like
// the record kinds: the sweeper names no feature.

// ExpiryKind is the sweeper's handler of the schedule entries of one
// kind.
type ExpiryKind struct {
	// Kind is the kind in the schedule entry (an Entity* name, or the
	// feature's own).
	Kind string
	// Swept is the name the Vault's metrics count the objects Expire
	// ends under (tokenvault.SweepKind).
	Swept string
	// Expire ends, in t, the life of tenant tid's object id whose entry
	// is due: it deletes the object (or marks it expired) as its feature
	// does, with the audit line and event that go with it. It reports
	// false when the object is gone or no longer expired (its expiry
	// moved), which leaves nothing to do; its errors fail the sweep's
	// transaction.
	Expire func(t *Tx, tid, id string) (bool, error)
}
