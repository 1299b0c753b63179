package barrier

import (
	"crypto/hkdf"
	"crypto/sha256"

	"github.com/tokenvault/tokenvault/internal/fpe"
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

// FPE is the FF1 cipher of the keys' owner for stateless encodings
// (FPEEncode, FPEDecode): AES-256 under a key derived with HKDF-SHA256
// from the index key. The derivation's extract step keys HMAC with a zero
// salt, not the index key, so no MAC the index key makes (MAC, over any
// input) can equal an FPE key.
//
// It does not change when the data key rotates (Rotate keeps the index
// key), because FF1 output has no room for a key version and deterministic
// output must stay the same for the same value; package fpe's doc has the
// reasoning. It is as secret as the index key and sealed with it.
func (k *Keys) FPE() *fpe.FF1 {
	k.fpeOnce.Do(func() { k.fpe = deriveFF1(k.indexKey, fpeKeyLabel) })
	return k.fpe
}

// FPEIDs is the FF1 cipher of token ids derived by the fpe filter, kept
// like FPE under a key of its own.
func (k *Keys) FPEIDs() *fpe.FF1 {
	k.fpeIDsOnce.Do(func() { k.fpeIDs = deriveFF1(k.indexKey, fpeIDKeyLabel) })
	return k.fpeIDs
}

func deriveFF1(indexKey []byte, label string) *fpe.FF1 {
	key, err := hkdf.Key(sha256.New, indexKey, nil, label, 32)
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
