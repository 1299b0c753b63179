// Package pkcs11 keeps Token Vault's root of trust in an HSM: a
// tokenvault.KeyWrapper that wraps keyrings with AES-256-GCM under an AES
// key that lives in a PKCS#11 token, sensitive and not extractable, so no
// master key ever exists on disk, in the environment or in the process.
// It uses github.com/ThalesGroup/crypto11, and so cgo, and loads the
// token's PKCS#11 module (a shared library) at run time.
//
//	w, err := pkcs11.Open(pkcs11.Config{
//		Module: "/usr/lib/softhsm/libsofthsm2.so", TokenLabel: "tokenvault",
//		PIN: pin, KeyLabel: "tokenvault-root",
//	})
//	defer w.Close()
//	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: "vault.db", KeyWrapper: w})
//
// The key is found by its label (CKA_LABEL). When no key has the label,
// the first Wrap (a new store's first keyring, or a rotation to this
// wrapper) generates one in the token: CKA_TOKEN, CKA_SENSITIVE,
// not CKA_EXTRACTABLE, with a random CKA_ID. Unwrapping never generates a
// key, so a wrong label fails to open a store and leaves the token as it
// was.
//
// Each wrapped keyring records the key label as its key id and the key's
// CKA_ID (hex) as its version: a store keeps opening after the label is
// given to a new key only if the old key is still in the token. The
// ciphertext is a random 12-byte nonce followed by the GCM output; the
// additional data is the store key of the keyring, computed in the token.
package pkcs11

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/ThalesGroup/crypto11"

	"github.com/tokenvault/tokenvault"
)

// Kind is the kind of this wrapper, recorded in every envelope it wraps.
const Kind = "pkcs11"

// Config locates the token and the key.
type Config struct {
	// Module is the path of the token's PKCS#11 library, such as
	// /usr/lib/softhsm/libsofthsm2.so.
	Module string
	// TokenLabel selects the token (CKA_LABEL of the token, as
	// softhsm2-util --show-slots lists it).
	TokenLabel string
	// PIN is the user PIN of the token.
	PIN string
	// KeyLabel is the label of the AES key, generated on first Wrap when
	// the token has none.
	KeyLabel string
}

// Wrapper is a tokenvault.KeyWrapper whose key is in a PKCS#11 token. It
// is safe for concurrent use.
type Wrapper struct {
	p11       *crypto11.Context
	label     string
	closeOnce sync.Once

	mu      sync.Mutex
	current *tokenKey            // the key labelled label; nil until found or generated
	byID    map[string]*tokenKey // hex CKA_ID -> key, for unwrapping
}

type tokenKey struct {
	id   string // hex CKA_ID
	aead cipher.AEAD
}

var _ tokenvault.KeyWrapper = (*Wrapper)(nil)

const nonceSize = 12

// Open loads the module, logs in to the token and looks the key up. A
// missing module, token or key label, or a wrong PIN, is an error here
// (errors name the module and token, never the PIN). A missing key is
// not: the first Wrap generates it.
func Open(cfg Config) (*Wrapper, error) {
	switch {
	case cfg.Module == "":
		return nil, errors.New("pkcs11: the module (library path) is required")
	case cfg.TokenLabel == "":
		return nil, errors.New("pkcs11: the token label is required")
	case cfg.KeyLabel == "" || len(cfg.KeyLabel) > 255:
		return nil, errors.New("pkcs11: the key label is required, at most 255 bytes")
	}
	p11, err := crypto11.Configure(&crypto11.Config{
		Path: cfg.Module, TokenLabel: cfg.TokenLabel, Pin: cfg.PIN, GCMIVLength: nonceSize,
	})
	if err != nil {
		return nil, fmt.Errorf("pkcs11: token %q in %s: %w", cfg.TokenLabel, cfg.Module, err)
	}
	w := &Wrapper{p11: p11, label: cfg.KeyLabel, byID: map[string]*tokenKey{}}
	if _, err := w.find(nil); err != nil && !errors.Is(err, errNoKey) {
		p11.Close()
		return nil, err
	}
	return w, nil
}

// Close logs out and unloads the module (once its last user closes).
// Calls after the first do nothing.
func (w *Wrapper) Close() error {
	var err error
	w.closeOnce.Do(func() { err = w.p11.Close() })
	return err
}

// Kind is "pkcs11".
func (w *Wrapper) Kind() string { return Kind }

// KeyLabel is the label of the wrapping key.
func (w *Wrapper) KeyLabel() string { return w.label }

var errNoKey = errors.New("pkcs11: no such key in the token")

// find returns the key labelled w.label with CKA_ID id (any id when nil),
// from the cache or the token. With a nil id it also sets w.current, and
// fails when several keys carry the label.
func (w *Wrapper) find(id []byte) (*tokenKey, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id == nil && w.current != nil {
		return w.current, nil
	}
	if k, ok := w.byID[hex.EncodeToString(id)]; ok && id != nil {
		return k, nil
	}
	keys, err := w.p11.FindKeys(id, []byte(w.label))
	if err != nil {
		return nil, fmt.Errorf("pkcs11: find key %q: %w", w.label, err)
	}
	switch {
	case len(keys) == 0:
		return nil, fmt.Errorf("%w: %q (id %x)", errNoKey, w.label, id)
	case len(keys) > 1 && id == nil:
		return nil, fmt.Errorf("pkcs11: %d keys carry the label %q; keep one, or choose another label", len(keys), w.label)
	}
	return w.adopt(keys[0], id == nil)
}

// adopt caches a token key; current makes it the one Wrap uses. w.mu is
// held.
func (w *Wrapper) adopt(key *crypto11.SecretKey, current bool) (*tokenKey, error) {
	attr, err := w.p11.GetAttribute(key, crypto11.CkaId)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: key %q: read its id: %w", w.label, err)
	}
	aead, err := key.NewGCM()
	if err != nil {
		return nil, fmt.Errorf("pkcs11: key %q: %w", w.label, err)
	}
	k := &tokenKey{id: hex.EncodeToString(attr.Value), aead: aead}
	w.byID[k.id] = k
	if current {
		w.current = k
	}
	return k, nil
}

// generate creates the wrapping key in the token unless it exists.
func (w *Wrapper) generate() (*tokenKey, error) {
	if k, err := w.find(nil); !errors.Is(err, errNoKey) {
		return k, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.current != nil {
		return w.current, nil
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	// crypto11 sets CKA_TOKEN, CKA_SENSITIVE and CKA_EXTRACTABLE=false
	// unless told otherwise.
	key, err := w.p11.GenerateSecretKeyWithLabel(id, []byte(w.label), 256, crypto11.CipherAES)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: generate key %q: %w", w.label, err)
	}
	return w.adopt(key, true)
}

// Wrap encrypts plaintext in the token under the key labelled KeyLabel,
// generating the key first if the token has none. The key id is the
// label, the version the key's CKA_ID in hex.
func (w *Wrapper) Wrap(_ context.Context, plaintext, aad []byte) (tokenvault.WrappedKey, error) {
	k, err := w.generate()
	if err != nil {
		return tokenvault.WrappedKey{}, err
	}
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return tokenvault.WrappedKey{}, err
	}
	ct, err := seal(k.aead, nonce, plaintext, aad)
	if err != nil {
		return tokenvault.WrappedKey{}, err
	}
	return tokenvault.WrappedKey{Kind: Kind, KeyID: w.label, Version: k.id, Ciphertext: append(nonce, ct...)}, nil
}

// seal is aead.Seal, whose crypto11 implementation panics when the token
// fails, with the panic turned into an error.
func seal(aead cipher.AEAD, nonce, plaintext, aad []byte) (ct []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			ct, err = nil, fmt.Errorf("pkcs11: encrypt: %v", r)
		}
	}()
	return aead.Seal(nil, nonce, plaintext, aad), nil
}

// Unwrap decrypts in the token what Wrap returned, with the key of the
// recorded label and CKA_ID. It never generates a key.
func (w *Wrapper) Unwrap(_ context.Context, wk tokenvault.WrappedKey, aad []byte) ([]byte, error) {
	if wk.KeyID != w.label {
		return nil, fmt.Errorf("pkcs11: wrapped under the key %q, and this wrapper holds %q", wk.KeyID, w.label)
	}
	id, err := hex.DecodeString(wk.Version)
	if err != nil || len(id) == 0 {
		return nil, errors.New("pkcs11: malformed key version")
	}
	k, err := w.find(id)
	if err != nil {
		return nil, err
	}
	if len(wk.Ciphertext) < nonceSize {
		return nil, errors.New("pkcs11: decrypt: message authentication failed")
	}
	pt, err := k.aead.Open(nil, wk.Ciphertext[:nonceSize], wk.Ciphertext[nonceSize:], aad)
	if err != nil {
		// The token's reason (CKR_ENCRYPTED_DATA_INVALID, or why the token
		// could not be reached) holds nothing secret.
		return nil, fmt.Errorf("pkcs11: decrypt: %w", err)
	}
	return pt, nil
}
