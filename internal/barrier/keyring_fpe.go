package barrier

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"github.com/tokenvault/tokenvault/internal/fpe"
	"github.com/tokenvault/tokenvault/internal/seal"
)

// The HKDF info of the FPE keys. A new label is a new key: every FF1
// token id and encoding made under the old one would stop decoding, so
// they never change. Token ids and stateless encodings have keys of their
// own, so that fpe:decode (FPEDecode) can never decode a token id, which
// would reveal data to a key that may not read the token.
const (
	fpeKeyLabel   = "tokenvault fpe ff1 aes-256 v1"
	fpeIDKeyLabel = "tokenvault fpe ff1 aes-256 token ids v1"
)

// FPE key versions.
//
// FF1 output has the input's exact format, so it cannot say which key
// made it, and any key deciphers any value to something: the version
// travels beside the value instead (FPEEncode answers it, FPEDecode takes
// it), and the keyring keeps every version, so that what an older one
// made still decodes. Version 1 is the keys every tenant had before
// versions existed: derived with HKDF-SHA256 from the index key, as they
// always were. RotateFPE adds a version with a fresh random secret of its
// own (not derived from the index key, so a rotation after a leak of any
// earlier key or of the index key gives keys that leak nothing), stored
// in the wrapped keyring beside the index key. Each version has its two
// keys, stateless encodings and token ids, derived from its secret with
// the labels above. Data key rotation (Rotate) keeps them all.

// FirstFPEVersion is the version of the FPE keys derived from the index
// key: every keyring's, until RotateFPE.
const FirstFPEVersion = 1

// fpeSecret is an FPE key version's secret, which its two keys are
// derived from.
type fpeSecret struct {
	Version int    `json:"version"`
	Secret  []byte `json:"secret"`
}

// ff1Cache holds the FF1 ciphers of a keyring, derived when first needed.
type ff1Cache struct {
	mu   sync.Mutex
	ciph map[ff1Name]*fpe.FF1
}

type ff1Name struct {
	version int
	label   string
}

// FPEVersion is the current FPE key version: the one FPE and FPEIDs use.
func (k *Keys) FPEVersion() int {
	if n := len(k.fpeKeys); n > 0 {
		return k.fpeKeys[n-1].Version
	}
	return FirstFPEVersion
}

// FPE is the FF1 cipher of the keys' owner for stateless encodings
// (FPEEncode, FPEDecode) at the current version: AES-256 under a key
// derived with HKDF-SHA256 from the version's secret (the index key for
// version 1). The derivation's extract step keys HMAC with a zero salt,
// not the secret, so no MAC the index key makes (MAC, over any input) can
// equal an FPE key. It is as secret as the index key and sealed with it.
func (k *Keys) FPE() *fpe.FF1 {
	f, _ := k.FPEAt(k.FPEVersion())
	return f
}

// FPEIDs is the FF1 cipher of token ids derived by the fpe filter at the
// current version, kept like FPE under a key of its own.
func (k *Keys) FPEIDs() *fpe.FF1 {
	f, _ := k.FPEIDsAt(k.FPEVersion())
	return f
}

// FPEAt is FPE at version v; false when the keyring has no such version.
func (k *Keys) FPEAt(v int) (*fpe.FF1, bool) { return k.ff1(v, fpeKeyLabel) }

// FPEIDsAt is FPEIDs at version v; false when the keyring has no such
// version.
func (k *Keys) FPEIDsAt(v int) (*fpe.FF1, bool) { return k.ff1(v, fpeIDKeyLabel) }

func (k *Keys) ff1(v int, label string) (*fpe.FF1, bool) {
	var secret []byte
	if v == FirstFPEVersion {
		secret = k.indexKey
	} else {
		i := slices.IndexFunc(k.fpeKeys, func(s fpeSecret) bool { return s.Version == v })
		if i < 0 {
			return nil, false
		}
		secret = k.fpeKeys[i].Secret
	}
	k.ff1s.mu.Lock()
	defer k.ff1s.mu.Unlock()
	name := ff1Name{v, label}
	if f, ok := k.ff1s.ciph[name]; ok {
		return f, true
	}
	f := deriveFF1(secret, label)
	if k.ff1s.ciph == nil {
		k.ff1s.ciph = map[ff1Name]*fpe.FF1{}
	}
	k.ff1s.ciph[name] = f
	return f, true
}

// RotateFPE returns the keys with a new current FPE key version (the
// next number) under a fresh random secret: the same data keys and index
// key, and every older FPE version still there for decoding.
func (k *Keys) RotateFPE() (*Keys, error) {
	secret, err := seal.RandomKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: new fpe key: %w", err)
	}
	versions := append(slices.Clone(k.fpeKeys), fpeSecret{Version: k.FPEVersion() + 1, Secret: secret})
	return &Keys{ring: k.ring, indexKey: k.indexKey, fpeKeys: versions}, nil
}

func deriveFF1(secret []byte, label string) *fpe.FF1 {
	key, err := hkdf.Key(sha256.New, secret, nil, label, 32)
	if err != nil {
		// HKDF-SHA256 fails only for outputs over 255*32 bytes.
		panic("tokenvault: fpe key derivation: " + err.Error())
	}
	f, err := fpe.NewFF1(key)
	if err != nil {
		panic("tokenvault: fpe key: " + err.Error())
	}
	return f
}
