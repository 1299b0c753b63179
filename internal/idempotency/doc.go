// Package idempotency is the feature of idempotency keys: a caller that
// cannot tell whether a creating request took effect sends it again with
// the same key and gets the first answer (the root's Vault.Idempotent,
// for every feature's creating calls, which is why these records are not
// any one feature's). It holds the claim of a key (Claim: found by a keyed
// HMAC of the caller and the key, leased while the request runs, Finish
// keeps its response or releases it, Sweep removes it once its Window is
// over), the request's Fingerprint a repeat must match, and the stored
// record (Record, with Expired) with the response it keeps (Response,
// which the root names IdempotentResponse), in its own encoding with its
// format's history in its doc (golden fixtures in the root's
// testdata/records pin every version's bytes). The rules a caller sees
// are in the root's package documentation ("Idempotency"), beside
// Vault.Idempotent, which authenticates, claims, runs and finishes.
// This package never imports the root.
package idempotency
