// Package fpe is format-preserving encryption: the FF1 mode of NIST SP
// 800-38G (Rev. 1) over AES, written from the standard because no
// maintained Go module for it is available to this build.
//
// FF1 enciphers a string of numerals of a radix (an [Alphabet]) into
// another of the same length and radix: a 16-digit number into a 16-digit
// number. It is deterministic, so a value always enciphers to the same
// result under one key and tweak, which is what lets a vault derive token
// ids that join and group like the values they replace. [Format] keeps
// separators in place; [Card] keeps a card's BIN and last four when asked
// and decides whether the result passes the Luhn check.
//
// # Domain
//
// The standard requires radix^length >= 1,000,000 ([MinDomain]): 6
// decimal digits, 4 base-36 characters, 20 bits. Shorter values are
// [ErrTooShort]. Values longer than [MaxLen] characters are [ErrTooLong]
// and tweaks longer than [MaxTweak] bytes are [ErrTweak]; both bounds are
// this package's, to bound one call's work. Errors never quote the value.
//
// # Keys and rotation
//
// FF1 has no integrity and no room for a key version: any string of the
// alphabet deciphers, under any key, to some string of the alphabet, and
// the output has exactly the input's format, so it cannot carry a version
// marker. Two consequences decide how the vault keys it:
//
//   - Decoding cannot "try the active key, then older ones": every key
//     gives an answer and nothing tells the right one apart.
//   - A deterministic token id made under one key must be made again
//     under the same key for the same value, or joins and deduplication on
//     the id break after a rotation.
//
// So a tenant's FPE keys do not rotate with its data key, and they carry
// their version beside the value rather than in it. They have versions of
// their own: version 1 is derived (HKDF-SHA256, a label each: one for
// stateless encodings, one for token ids, so that decoding never reveals
// what a token id hides) from the tenant's index key, the key that
// already does not rotate (the HMAC indexes it builds must stay
// findable); each rotation (Vault.RotateFPEKey) adds a version derived
// the same way from a random secret of its own, and becomes the current
// one. Encoding answers the version it used and decoding takes it, so
// what an older version encoded still decodes; new token ids are derived
// with the current version, and ids derived before keep naming their
// tokens. Every version lives, and is sealed, inside the tenant's wrapped
// keyring, so rotating the master key or the key wrapper re-wraps them
// like every other tenant key, and deleting the tenant destroys them.
// Rotating the data key re-seals records under a new term and leaves FPE
// ids and encodings valid (barrier.Keys.FPE, FPEAt, RotateFPE).
package fpe
