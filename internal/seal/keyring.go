package seal

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// A Keyring holds the data keys of one owner, each under a term number. New
// ciphertexts are sealed under the highest (active) term; any held term can
// open. A Keyring is immutable and safe for concurrent use: Rotate returns a
// new one.
type Keyring struct {
	active uint32
	keys   map[uint32][]byte
	aeads  map[uint32]cipher.AEAD
}

// NewKeyring returns a keyring with a single key, term 1, read from rand.
func NewKeyring(rand io.Reader) (*Keyring, error) {
	k, err := RandomKey(rand)
	if err != nil {
		return nil, err
	}
	return newKeyring(1, map[uint32][]byte{1: k}), nil
}

func newKeyring(active uint32, keys map[uint32][]byte) *Keyring {
	r := &Keyring{active: active, keys: keys, aeads: make(map[uint32]cipher.AEAD, len(keys))}
	for term, k := range keys {
		r.aeads[term] = newAEAD(k)
	}
	return r
}

// Rotate returns a keyring holding every key of r plus a new active key one
// term above r's. r itself is unchanged.
func (r *Keyring) Rotate(rand io.Reader) (*Keyring, error) {
	if r.active == ^uint32(0) {
		return nil, fmt.Errorf("seal: keyring has reached its last term")
	}
	k, err := RandomKey(rand)
	if err != nil {
		return nil, err
	}
	keys := make(map[uint32][]byte, len(r.keys)+1)
	for term, old := range r.keys {
		keys[term] = old
	}
	keys[r.active+1] = k
	return newKeyring(r.active+1, keys), nil
}

// ActiveTerm is the term new ciphertexts are sealed under.
func (r *Keyring) ActiveTerm() uint32 { return r.active }

// Terms lists the held terms in ascending order.
func (r *Keyring) Terms() []uint32 {
	terms := make([]uint32, 0, len(r.keys))
	for term := range r.keys {
		terms = append(terms, term)
	}
	slices.Sort(terms)
	return terms
}

// Seal encrypts pt under the active key, binding it to aad.
func (r *Keyring) Seal(aad, pt []byte) []byte {
	ct, err := sealWith(r.aeads[r.active], r.active, rand.Reader, aad, pt)
	if err != nil {
		// crypto/rand.Reader does not fail on supported platforms.
		panic(err)
	}
	return ct
}

// Open decrypts ct, which must have been sealed by this keyring (under any
// held term) with the same aad.
func (r *Keyring) Open(aad, ct []byte) ([]byte, error) {
	term, ok := Term(ct)
	if !ok {
		return nil, ErrOpen
	}
	aead, ok := r.aeads[term]
	if !ok {
		return nil, ErrOpen
	}
	return openWith(aead, aad, ct)
}

// String names the keyring by its terms only.
func (r *Keyring) String() string {
	return fmt.Sprintf("seal.Keyring{active: %d, terms: %d}", r.active, len(r.keys))
}

// GoString is String, so that %#v does not print keys.
func (r *Keyring) GoString() string { return r.String() }

// MarshalBinary encodes the keyring, keys included: the result is secret and
// must itself be sealed before it is stored.
func (r *Keyring) MarshalBinary() ([]byte, error) {
	terms := r.Terms()
	b := make([]byte, 0, 1+4+4+len(terms)*(4+KeySize))
	b = append(b, version)
	b = binary.BigEndian.AppendUint32(b, r.active)
	b = binary.BigEndian.AppendUint32(b, uint32(len(terms)))
	for _, term := range terms {
		b = binary.BigEndian.AppendUint32(b, term)
		b = append(b, r.keys[term]...)
	}
	return b, nil
}

// UnmarshalKeyring decodes what MarshalBinary produced.
func UnmarshalKeyring(b []byte) (*Keyring, error) {
	errBad := fmt.Errorf("seal: malformed keyring")
	if len(b) < 9 || b[0] != version {
		return nil, errBad
	}
	active := binary.BigEndian.Uint32(b[1:5])
	n := binary.BigEndian.Uint32(b[5:9])
	rest := b[9:]
	if uint64(len(rest)) != uint64(n)*(4+KeySize) {
		return nil, errBad
	}
	keys := make(map[uint32][]byte, n)
	for len(rest) > 0 {
		term := binary.BigEndian.Uint32(rest)
		if _, dup := keys[term]; dup || term == 0 {
			return nil, errBad
		}
		keys[term] = slices.Clone(rest[4 : 4+KeySize])
		rest = rest[4+KeySize:]
	}
	if _, ok := keys[active]; !ok {
		return nil, errBad
	}
	return newKeyring(active, keys), nil
}

// KeyringOf returns a keyring holding key alone, as term 1: for a key
// kept elsewhere (a data subject's key, internal/subjects), which seals
// and opens with the same format as every other keyring.
func KeyringOf(key []byte) (*Keyring, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: a key must be %d bytes", KeySize)
	}
	return newKeyring(1, map[uint32][]byte{1: slices.Clone(key)}), nil
}
