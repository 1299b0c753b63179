package barrier

import (
	"crypto/hkdf"
	"crypto/sha256"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

// fpeKeyLabel is the HKDF info of the FPE key. A new label is a new key:
// every FF1 token id and encoding made under the old one would stop
// decoding, so it never changes.
const fpeKeyLabel = "tokenvault fpe ff1 aes-256 v1"

// FPE is the FF1 cipher of the keys' owner: AES-256 under a key derived
// with HKDF-SHA256 from the index key. The derivation's extract step keys
// HMAC with a zero salt, not the index key, so no MAC the index key makes
// (MAC, over any input) can equal the FPE key.
//
// It does not change when the data key rotates (Rotate keeps the index
// key), because FF1 output has no room for a key version and deterministic
// ids must stay the same for the same value; package fpe's doc has the
// reasoning. It is as secret as the index key and sealed with it.
func (k *Keys) FPE() *fpe.FF1 {
	k.fpeOnce.Do(func() {
		key, err := hkdf.Key(sha256.New, k.indexKey, nil, fpeKeyLabel, 32)
		if err != nil {
			// HKDF-SHA256 fails only for outputs over 255*32 bytes.
			panic("tokenvault: fpe key derivation: " + err.Error())
		}
		f, err := fpe.NewFF1(key)
		if err != nil {
			panic("tokenvault: fpe key: " + err.Error())
		}
		k.fpe = f
	})
	return k.fpe
}
