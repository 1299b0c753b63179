// Package keyenvelope is the stored form of a wrapped keyring (the
// envelope): what a key wrapper returned, with the wrapper's kind and the
// id and version of the key it used in front of the ciphertext, so that
// the Vault can tell which wrapper opens a keyring, and an operator which
// key a store needs, without unwrapping anything.
//
// It is a package of its own so that its tests and FuzzEnvelope build
// without the root package: the format is a parser of stored bytes, and
// nothing of the Vault is needed to hold it to them.
//
// # Format
//
//	[Version=2][len][kind][len][key id][len][version][ciphertext]
//
// each len one byte. Keyrings wrapped before key wrappers existed are the
// bare output of the master key (internal/seal's format), whose first
// byte is seal's version, 1: they are told apart by that byte and are
// opened by a local wrapper holding their master key.
package keyenvelope

import (
	"errors"
	"fmt"
)

// Envelope is a wrapped key as stored: the wrapper's kind, the id and
// version of the key that wrapped it, and the ciphertext. The root's
// public WrappedKey has the same fields and converts to and from it.
type Envelope struct {
	Kind       string
	KeyID      string
	Version    string
	Ciphertext []byte
}

const (
	// Version is the first byte of an envelope.
	Version byte = 2
	// LegacyVersion is the first byte of a keyring wrapped by a bare
	// master key, before key wrappers existed.
	LegacyVersion byte = 1
	// MaxKindLen bounds a wrapper's kind, in bytes; key ids and versions
	// are at most 255 bytes (their lengths are one byte).
	MaxKindLen = 32
	// LocalKind is the kind of the local key wrapper: a legacy keyring
	// is read as one of its envelopes.
	LocalKind = "local"
)

// ErrMalformed is the error of an envelope that does not parse.
var ErrMalformed = errors.New("tokenvault: malformed wrapped key")

// Marshal returns the stored form of e. It fails when the kind is empty
// or longer than MaxKindLen, or the key id or version longer than 255
// bytes: a wrapper's answer the format cannot hold.
func Marshal(e Envelope) ([]byte, error) {
	if e.Kind == "" || len(e.Kind) > MaxKindLen || len(e.KeyID) > 255 || len(e.Version) > 255 {
		return nil, fmt.Errorf("tokenvault: key wrapper %q returned a kind, key id or version out of bounds", e.Kind)
	}
	b := make([]byte, 0, 4+len(e.Kind)+len(e.KeyID)+len(e.Version)+len(e.Ciphertext))
	b = append(b, Version)
	for _, s := range []string{e.Kind, e.KeyID, e.Version} {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return append(b, e.Ciphertext...), nil
}

// Unmarshal parses an envelope; legacy reports a keyring wrapped by a
// bare master key, whose bytes are then e.Ciphertext (of kind LocalKind).
// It fails with ErrMalformed.
func Unmarshal(raw []byte) (e Envelope, legacy bool, err error) {
	if len(raw) == 0 {
		return e, false, ErrMalformed
	}
	switch raw[0] {
	case LegacyVersion:
		return Envelope{Kind: LocalKind, Ciphertext: raw}, true, nil
	case Version:
	default:
		return e, false, ErrMalformed
	}
	rest := raw[1:]
	var fields [3]string
	for i := range fields {
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			return e, false, ErrMalformed
		}
		n := int(rest[0])
		fields[i], rest = string(rest[1:1+n]), rest[1+n:]
	}
	return Envelope{Kind: fields[0], KeyID: fields[1], Version: fields[2], Ciphertext: rest}, false, nil
}
