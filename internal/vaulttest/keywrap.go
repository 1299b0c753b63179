package vaulttest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// AESWrapper is a KeyWrapper of another kind than local, for these tests:
// AES-256-GCM with a key the test holds, its id the key's first bytes.
type AESWrapper struct {
	key  []byte
	aead cipher.AEAD
}

// NewAESWrapper is an AESWrapper with a new random key.
func NewAESWrapper(t *testing.T) *AESWrapper {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	return &AESWrapper{key: key, aead: aead}
}

// Kind is "test-aes".
func (w *AESWrapper) Kind() string { return "test-aes" }

// ID is the hex of the key's first four bytes.
func (w *AESWrapper) ID() string { return hex.EncodeToString(w.key[:4]) }

// Wrap seals pt under the key with aad, a random nonce first.
func (w *AESWrapper) Wrap(_ context.Context, pt, aad []byte) (tokenvault.WrappedKey, error) {
	nonce := make([]byte, w.aead.NonceSize())
	rand.Read(nonce)
	return tokenvault.WrappedKey{Kind: w.Kind(), KeyID: w.ID(), Version: "7", Ciphertext: w.aead.Seal(nonce, nonce, pt, aad)}, nil
}

// Unwrap opens what Wrap sealed; a key wrapped under another key is an
// error.
func (w *AESWrapper) Unwrap(_ context.Context, k tokenvault.WrappedKey, aad []byte) ([]byte, error) {
	if k.KeyID != w.ID() || len(k.Ciphertext) < w.aead.NonceSize() {
		return nil, errors.New("test-aes: not wrapped under this key")
	}
	n := w.aead.NonceSize()
	return w.aead.Open(nil, k.Ciphertext[:n], k.Ciphertext[n:], aad)
}
