// Package counts owns the stored form of the kept counts and the folder
// that keeps their sums short.
//
// A kept count (how many records of a kind a tenant has, how many tokens
// of a type or a card, how many tenants the store holds) is kept by the
// barrier (internal/barrier's "Kept counts"): a commit writes its changes
// as delta rows that only its instance writes, and reading a count sums
// its base row and its delta rows, so no commit writes a row every call of
// a tenant writes. This package gives those rows their record (Record,
// and the barrier's Codec) and runs the folder (Folder) that adds delta
// rows into their base row beside the commits.
//
// It guarantees that a row in the JSON of format version 0 still reads,
// and that a fold loses no change (the barrier's fold is one transaction
// per batch of counts). It does not decide what is counted (the barrier's
// CountedKinds and the features that count) nor when a count is read.
//
// The barrier keeps the counts rather than this package owning them
// because it is the one that sees every record written and deleted (it
// counts them at Put and Delete); it takes their encoding from here
// (barrier.CountCodec) because a record's format belongs with the unit of
// work's codec (internal/unit), which the barrier cannot import.
package counts
