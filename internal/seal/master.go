package seal

import (
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
)

// A MasterKey wraps keyrings. It holds the current key, which seals, and any
// previous keys, which only open: that is what lets an operator rotate the
// master key and still start on a store wrapped under the old one. Keys are
// told apart by an id derived from the key itself, never by its bytes.
// A MasterKey is immutable and safe for concurrent use.
type MasterKey struct {
	current uint32
	aeads   map[uint32]cipher.AEAD
	ids     []uint32 // current first, then previous keys in the order given
}

// NewMasterKey returns a master key sealing with current and opening with
// current or any of previous. Every key must be KeySize bytes; errors never
// include key bytes.
func NewMasterKey(current []byte, previous ...[]byte) (*MasterKey, error) {
	m := &MasterKey{aeads: make(map[uint32]cipher.AEAD)}
	for i, k := range append([][]byte{current}, previous...) {
		if len(k) != KeySize {
			if i == 0 {
				return nil, fmt.Errorf("seal: master key is %d bytes, want %d", len(k), KeySize)
			}
			return nil, fmt.Errorf("seal: previous master key %d is %d bytes, want %d", i, len(k), KeySize)
		}
		id := keyID(k)
		if _, dup := m.aeads[id]; dup {
			continue
		}
		m.aeads[id] = newAEAD(slices.Clone(k))
		m.ids = append(m.ids, id)
	}
	m.current = m.ids[0]
	return m, nil
}

// keyID derives a public identifier from a key: it reveals nothing useful
// about the key, and is the same for the same key on every run.
func keyID(k []byte) uint32 {
	h := hmac.New(sha256.New, k)
	h.Write([]byte("tokenvault master key id v1"))
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// ID is the id of the current key, as written into every ciphertext it seals.
func (m *MasterKey) ID() uint32 { return m.current }

// Rotate returns a master key that seals with newKey and still opens with
// every key m opens with.
func (m *MasterKey) Rotate(newKey []byte) (*MasterKey, error) {
	if len(newKey) != KeySize {
		return nil, fmt.Errorf("seal: master key is %d bytes, want %d", len(newKey), KeySize)
	}
	id := keyID(newKey)
	next := &MasterKey{current: id, aeads: make(map[uint32]cipher.AEAD, len(m.aeads)+1)}
	next.aeads[id] = newAEAD(slices.Clone(newKey))
	next.ids = append(next.ids, id)
	for _, old := range m.ids {
		if old != id {
			next.aeads[old] = m.aeads[old]
			next.ids = append(next.ids, old)
		}
	}
	return next, nil
}

// Seal encrypts pt under the current key, binding it to aad.
func (m *MasterKey) Seal(aad, pt []byte) []byte {
	ct, err := sealWith(m.aeads[m.current], m.current, rand.Reader, aad, pt)
	if err != nil {
		// crypto/rand.Reader does not fail on supported platforms.
		panic(err)
	}
	return ct
}

// Open decrypts ct, sealed under any key m holds with the same aad.
func (m *MasterKey) Open(aad, ct []byte) ([]byte, error) {
	id, ok := Term(ct)
	if !ok {
		return nil, ErrOpen
	}
	aead, ok := m.aeads[id]
	if !ok {
		return nil, ErrOpen
	}
	return openWith(aead, aad, ct)
}

// String names the master key by its id only.
func (m *MasterKey) String() string {
	return fmt.Sprintf("seal.MasterKey{id: %08x, previous: %d}", m.current, len(m.ids)-1)
}

// GoString is String, so that %#v does not print keys.
func (m *MasterKey) GoString() string { return m.String() }
