package tokenvault

import (
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/seal"
)

// NeededKey returns which key a store needs, from an error of Open that
// is ErrWrongMasterKey: the kind of key wrapper, the key id and the
// version its system keyring was wrapped under (WrappedKey without the
// ciphertext). A local master key's id is LocalKeyID of the key. ok is
// false for any other error, and for a store whose keyring predates key
// wrappers (its key id is inside the ciphertext only).
//
// It lets a restore say which of the keys an operator kept a backup needs
// (rotating the master key leaves older backups under the older key).
func NeededKey(err error) (needs WrappedKey, ok bool) {
	var wk *wrongKeyError
	if !errors.As(err, &wk) || wk.needs.KeyID == "" {
		return WrappedKey{}, false
	}
	return wk.needs, true
}

// LocalKeyID is the key id of a local master key (32 bytes), as the local
// key wrapper records it: 8 hex digits derived from the key, which reveal
// nothing useful about it. Errors never include key bytes.
//
// Returns a plain error, of no Kind (ErrorKind says Internal), when key is
// not 32 bytes.
func LocalKeyID(key []byte) (string, error) {
	m, err := seal.NewMasterKey(key)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x", m.ID()), nil
}

// neededKey is the kind, key id and version of the envelope raw, or
// nothing when it cannot be read.
func neededKey(raw []byte) WrappedKey {
	w, legacy, err := unmarshalEnvelope(raw)
	if err != nil || legacy {
		return WrappedKey{}
	}
	return WrappedKey{Kind: w.Kind, KeyID: w.KeyID, Version: w.Version}
}
