// Package export is the export of a tenant's tokens (docs/export.md):
// the exchange format's lines (Line, LineOf), the age encryption of their
// stream to a recipient's public key (ParseRecipient, Writer), the
// manifest that says what was exported (Manifest), signed with the
// vault's audit signing key, its stored record (Record, at
// tenant/<tid>/export/<id>) and the check a receiving system runs
// (Verify). The root's ExportTokens authorizes, walks the tokens in one
// snapshot and writes through this package; `tokenvault export verify`
// runs Verify. It never imports the root package.
//
// # The exchange format
//
// NDJSON, UTF-8, one token a line: a JSON object with the fields of Line,
// absent when empty. The same format is read by an import. A card's cvc is
// never exported, nor a fingerprint (the receiving vault computes its
// own: fingerprint keys are per tenant), nor a decoy token (a tenant's
// trap, which means nothing elsewhere).
//
// # The manifest's signature
//
// The signature is Ed25519 over SignedBytes: the domain string
// "tokenvault export manifest v1", then each field in the order of
// Manifest's declaration (signature excluded), strings as a 4-byte
// big-endian length and their bytes, numbers as 8-byte big-endian
// integers, times as their Unix nanoseconds in 8 bytes. The key is one
// the vault publishes (GET /audit/keys, `tokenvault audit keys`), named by
// KeyID; a retired key still verifies what it signed.
package export
