// Package reseal re-seals a tenant's records after a data key rotation.
//
// RotateDataKey makes every new write use the new term at once, and
// records sealed before stay readable under their older terms. So that a
// key rotated out (because it may have leaked, or by policy) soon protects
// nothing, RotateDataKey also schedules the tenant for re-sealing, and
// Reseal, which the background sweeper runs, seals every record of the
// tenant again with the active term. It works resealBatch entries per
// transaction and remembers where it stopped, so a large tenant is done
// in small steps that never hold the store for long, and a restart resumes
// rather than starts over. Only ciphertexts change: values, indexes and
// the audit log stay as they were, except that records of the tenant
// still stored in the JSON of their format version 0 (unit.RecordKind)
// are rewritten in the current format (internal/unit/codec.go) on the way. One that holds
// what the current format cannot (a time before year 0 in UTC:
// unit.CheckRecordTimes) is sealed again as it is, still in version 0.
//
// On a store shared by several instances, one that has the keyring cached
// keeps sealing with the old term for up to keyringTTL, so the pass starts
// only after twice that (clock skew between instances included); what is
// written after it starts uses the new term everywhere.
package reseal
