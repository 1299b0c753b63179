// Package seal is Token Vault's authenticated encryption: keyrings of
// XChaCha20-Poly1305 data keys and the master key that wraps them.
//
// Every ciphertext is
//
//	[version=1][4-byte big-endian key id][24-byte random nonce][ciphertext+tag]
//
// The key id names the keyring term (or master key id) that sealed it, so a
// keyring that has been rotated can still open everything sealed under an
// older term, and a reader can tell that a ciphertext is newer than the
// keyring it holds. The caller passes the record's storage key as additional
// data, which binds a ciphertext to its place: moving a sealed value to
// another key makes it fail to open.
//
// Opening fails with the single error [ErrOpen] whatever went wrong, so that
// errors reveal nothing about keys or plaintexts. Nothing in this package
// formats key material: String and GoString of the key types print only ids.
package seal
