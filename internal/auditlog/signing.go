package auditlog

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The checkpoint signing keys (docs/audit-chain.md).
//
// The vault signs its chain heads (checkpoints) with an Ed25519 key of
// its own. Its record, sys/audit-key/<key id> (KeyRecord), holds the
// public key and the 32-byte seed wrapped by the key wrapper for that
// store key, and is sealed by the system keyring. This package makes
// keys (NewKey) and opens them (OpenKey) given the seed's wrapping and
// unwrapping, reads them (KeyRecords, ActiveKey) and publishes them
// (PublicKeyOf); the root holds the key wrapper and caches the key in use.

// KeyAlgorithm is the Algorithm of every published key.
const KeyAlgorithm = "Ed25519"

// Signer is a signing key's private part, unwrapped.
type Signer struct {
	ID  string
	Key ed25519.PrivateKey
}

// String keeps the private key out of any log line that prints a signer.
func (s *Signer) String() string { return "tokenvault.auditSigner{" + s.ID + "}" }

// NewKey makes a key from r, its seed wrapped by wrap for its store key,
// created at now.
func NewKey(r io.Reader, now time.Time, wrap func(storeKey string, seed []byte) ([]byte, error)) (*KeyRecord, *Signer, error) {
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return nil, nil, fmt.Errorf("tokenvault: new audit key: %w", err)
	}
	id := auditchain.KeyID(pub)
	seed := priv.Seed()
	defer clear(seed)
	wrapped, err := wrap(barrier.AuditKey(id).String(), seed)
	if err != nil {
		return nil, nil, err
	}
	return &KeyRecord{ID: id, Public: pub, Wrapped: wrapped, CreatedAt: now.UTC()}, &Signer{ID: id, Key: priv}, nil
}

// OpenKey is the signer of rec, whose seed unwrap unwraps for its store
// key; it checks the private key against rec's public key and id.
func OpenKey(rec *KeyRecord, unwrap func(storeKey string, wrapped []byte) ([]byte, error)) (*Signer, error) {
	key := barrier.AuditKey(rec.ID).String()
	seed, err := unwrap(key, rec.Wrapped)
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("tokenvault: %s: the unwrapped seed is not %d bytes", key, ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if pub := priv.Public().(ed25519.PublicKey); !bytes.Equal(pub, rec.Public) || auditchain.KeyID(pub) != rec.ID {
		return nil, fmt.Errorf("tokenvault: %s: the private key does not match its public key", key)
	}
	return &Signer{ID: rec.ID, Key: priv}, nil
}

// KeyRecords reads every signing key of the store, in t, oldest first.
func KeyRecords(t *unit.Tx) ([]*KeyRecord, error) {
	vals, err := t.ScanValues(barrier.AuditKeys)
	if err != nil {
		return nil, err
	}
	out := make([]*KeyRecord, 0, len(vals))
	for _, sv := range vals {
		r := &KeyRecord{}
		if err := t.OpenRecord(sv.Key, sv.Raw, r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	// Oldest first; of keys made at one instant (a clock that stood
	// still), the retired ones first, in the order they were retired.
	slices.SortFunc(out, func(a, b *KeyRecord) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmpBool(a.RetiredAt.IsZero(), b.RetiredAt.IsZero()),
			a.RetiredAt.Compare(b.RetiredAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// ActiveKey is the key in use among keys (oldest first): the newest not
// retired (two instances opening an empty shared store at once conflict
// on the scan and the write, and the store runs one again, so there is
// one); nil when every key is retired.
func ActiveKey(keys []*KeyRecord) *KeyRecord {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i].RetiredAt.IsZero() {
			return keys[i]
		}
	}
	return nil
}

// PublicKeyOf is the published form of r.
func PublicKeyOf(r *KeyRecord) auditchain.PublicKey {
	k := auditchain.PublicKey{ID: r.ID, Algorithm: KeyAlgorithm, Key: ed25519.PublicKey(bytes.Clone(r.Public)), CreatedAt: r.CreatedAt}
	if !r.RetiredAt.IsZero() {
		at := r.RetiredAt
		k.RetiredAt = &at
	}
	return k
}
