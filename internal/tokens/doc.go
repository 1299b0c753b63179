// Package tokens is the feature of tokens. It holds, so far, their stored
// records: a token (Record, with Expired; Kind is its record kind), a
// token list shape (ShapeRecord), where a store keeps its fingerprint
// index (FingerprintPlace) and the progress of the one-time scans of
// every tenant's tokens (LegacyCVCScan, ListBuild), each in its own
// encoding and with its format's history in its doc (golden fixtures in
// the root's testdata/records pin every version's bytes).
//
// The rest of the feature (tokenizing, reading, lists, aliases,
// fingerprints, the cvc) is still in the root package and moves here
// next; this package never imports the root.
package tokens
