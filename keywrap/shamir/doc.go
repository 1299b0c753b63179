// Package shamir splits a secret into n shares, any k of which recover it
// and fewer of which reveal nothing about it (Shamir's secret sharing over
// GF(2^8), the field of AES, one random polynomial of degree k-1 per byte
// of the secret).
//
// It is the arithmetic of tokenvault's split root of trust (-seal split):
// the root key exists only as shares, each held by one custodian, so that
// no single person can open the store (split knowledge and dual control).
// A Go program can use it directly: split a 32-byte key, hand the shares
// out, and later combine k of them into the key that
// tokenvault.Options.Keys.MasterKey takes (see the Example).
//
// # Shares
//
// A Share is its x coordinate (1 to 255, never 0: the secret is the value
// at 0) followed by one y byte per byte of the secret. Shares carry no
// integrity of their own: Combine of k shares always returns some bytes,
// and k shares of which one is wrong, or fewer than k, return bytes that
// are not the secret. Check the result against a check value kept with
// the shares' description (tokenvault.LocalKeyID of a root key), as the
// server does.
//
// # Errors
//
// Split and Combine return ErrInvalid (wrapped, with the reason) for bad
// arguments: n outside 1..255, k outside 2..n, an empty secret, no
// shares, shares of different lengths, a share of x = 0, two shares of the
// same x. Errors never contain share or secret bytes.
package shamir
