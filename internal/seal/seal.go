package seal

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the size in bytes of every key this package uses.
const KeySize = chacha20poly1305.KeySize

// version is the first byte of every ciphertext.
const version byte = 1

// headerSize is the version byte, the key id and the nonce.
const headerSize = 1 + 4 + chacha20poly1305.NonceSizeX

// Overhead is how many bytes sealing adds to a plaintext.
const Overhead = headerSize + chacha20poly1305.Overhead

// ErrOpen is returned whenever a ciphertext cannot be opened: it is
// truncated, was tampered with, was sealed for other additional data, or
// names a key that is not held. It deliberately says no more than that.
var ErrOpen = errors.New("seal: message authentication failed")

// RandomKey reads a new key from rand.
func RandomKey(rand io.Reader) ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := io.ReadFull(rand, k); err != nil {
		return nil, fmt.Errorf("seal: reading random key: %w", err)
	}
	return k, nil
}

// Term reports the key id a ciphertext was sealed under, and false if ct is
// too short or of an unknown version to have one.
func Term(ct []byte) (uint32, bool) {
	if len(ct) < Overhead || ct[0] != version {
		return 0, false
	}
	return binary.BigEndian.Uint32(ct[1:5]), true
}

// sealWith encrypts pt under aead, tagging it with id. The header is
// authenticated along with aad, so the id cannot be swapped.
func sealWith(aead cipher.AEAD, id uint32, rand io.Reader, aad, pt []byte) ([]byte, error) {
	out := make([]byte, headerSize, headerSize+len(pt)+aead.Overhead())
	out[0] = version
	binary.BigEndian.PutUint32(out[1:5], id)
	if _, err := io.ReadFull(rand, out[5:headerSize]); err != nil {
		return nil, fmt.Errorf("seal: reading nonce: %w", err)
	}
	return aead.Seal(out, out[5:headerSize], pt, additional(out[:5], aad)), nil
}

// openWith decrypts ct, whose header has already been checked, under aead.
func openWith(aead cipher.AEAD, aad, ct []byte) ([]byte, error) {
	pt, err := aead.Open(nil, ct[5:headerSize], ct[headerSize:], additional(ct[:5], aad))
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// additional is the data authenticated but not encrypted: the version and
// key id, then the caller's additional data.
func additional(header, aad []byte) []byte {
	b := make([]byte, 0, len(header)+len(aad))
	return append(append(b, header...), aad...)
}

func newAEAD(key []byte) cipher.AEAD {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		// Keys are checked to be KeySize long before they get here.
		panic("seal: invalid key length")
	}
	return aead
}
