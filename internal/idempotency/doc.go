// Package idempotency is the feature of idempotency keys: a caller that
// cannot tell whether a creating request took effect sends it again with
// the same key and gets the first answer (the root's Vault.Idempotent,
// for every feature's creating calls, which is why these records are not
// any one feature's). It holds, so far, the stored record of a key's
// claim or kept response (Record, with Expired) and the response it keeps
// (Response, which the root names IdempotentResponse), in its own
// encoding with its format's history in its doc (golden fixtures in the
// root's testdata/records pin every version's bytes).
//
// The rest of the feature (claims, leases, replay, the request's
// fingerprint) is still in the root package and moves here next; this
// package never imports the root.
package idempotency
