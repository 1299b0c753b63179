package barrier

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/seal"
)

// Keys is what the key wrapper wraps: a keyring that seals records, and an
// HMAC key for index entries derived from secrets, and the FPE keys'
// versions. The index key is never rotated, because the indexes it builds
// must stay findable; the first FPE keys are derived from it, and later
// ones (RotateFPE) have secrets of their own (keyring_fpe.go).
type Keys struct {
	ring     *seal.Keyring
	indexKey []byte
	// read is when (on the Vault's clock) the keyring was read from the
	// store or written, for the freshness of cached copies (KeyringTTL).
	read time.Time
	// macs keeps HMAC-SHA256 hashers keyed with indexKey for MAC: keying
	// one costs two SHA-256 blocks and three allocations, and every token
	// takes one MAC per fingerprint, search index and metadata entry.
	macs sync.Pool
	// fpeKeys are the FPE key versions after the first, oldest first;
	// ff1s their FF1 ciphers, derived when first needed (keyring_fpe.go).
	fpeKeys []fpeSecret
	ff1s    ff1Cache
}

// String keeps key bytes out of any log line that prints a Keys.
func (k *Keys) String() string { return "tokenvault.keySet{...}" }

// NewKeys makes a fresh keyring and index key.
func NewKeys() (*Keys, error) {
	ring, err := seal.NewKeyring(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: new keyring: %w", err)
	}
	ik, err := seal.RandomKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: new index key: %w", err)
	}
	return &Keys{ring: ring, indexKey: ik}, nil
}

// Ring is the keyring that seals: for what is sealed outside the store
// (list cursors) and for re-sealing.
func (k *Keys) Ring() *seal.Keyring { return k.ring }

// Rotate returns the keys with a new active data key: the same index key
// and FPE keys, and every older term still opening.
func (k *Keys) Rotate() (*Keys, error) {
	ring, err := k.ring.Rotate(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Keys{ring: ring, indexKey: k.indexKey, fpeKeys: k.fpeKeys}, nil
}

// MAC is the keyed hash used wherever a secret must be looked up.
func (k *Keys) MAC(parts ...[]byte) []byte {
	h, _ := k.macs.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, k.indexKey)
	} else {
		h.Reset()
	}
	for _, p := range parts {
		h.Write(p)
	}
	sum := h.Sum(nil)
	k.macs.Put(h)
	return sum
}

// wrappedKeys is what the key wrapper wraps. FPE is absent from keyrings
// written before FPE keys had versions (and from those never rotated):
// they have version 1 only.
type wrappedKeys struct {
	Ring     []byte      `json:"ring"`
	IndexKey []byte      `json:"index_key"`
	FPE      []fpeSecret `json:"fpe,omitempty"`
}

// wrap wraps ks with the current key wrapper, bound to its store key.
func (b *Barrier) wrap(ctx context.Context, storeKey string, ks *Keys) ([]byte, error) {
	ring, err := ks.ring.MarshalBinary()
	if err != nil {
		// A keyring built by seal always marshals.
		panic("tokenvault: keyring does not marshal")
	}
	bs, _ := json.Marshal(wrappedKeys{Ring: ring, IndexKey: ks.indexKey, FPE: ks.fpeKeys})
	return b.wrapper.WrapKeys(ctx, storeKey, bs)
}

// UnwrapKeys opens the keyring stored (wrapped) as raw at storeKey.
func (b *Barrier) UnwrapKeys(ctx context.Context, storeKey string, raw []byte) (*Keys, error) {
	bs, err := b.wrapper.UnwrapKeys(ctx, storeKey, raw)
	if err != nil {
		return nil, err
	}
	var w wrappedKeys
	if err := json.Unmarshal(bs, &w); err != nil {
		return nil, fmt.Errorf("tokenvault: keyring record: %w", err)
	}
	ring, err := seal.UnmarshalKeyring(w.Ring)
	if err != nil {
		return nil, err
	}
	return &Keys{ring: ring, indexKey: w.IndexKey, fpeKeys: w.FPE}, nil
}

// SetSystemKeys makes ks the system keyring, which seals the values of
// the keys of no tenant. The Vault reads or creates it when it opens
// (through Keyring), before any other transaction.
func (b *Barrier) SetSystemKeys(ks *Keys) { b.sys = ks }

// KeyringTTL bounds how long an instance that shares its store with
// others seals with a cached keyring: after another instance rotates a
// data key, every instance seals with the new term within KeyringTTL. A
// store used by one process only is never changed behind the cache.
const KeyringTTL = 5 * time.Second

// fresh reports whether a cached key set may still seal.
func (b *Barrier) fresh(ks *Keys) bool {
	return b.single || b.now().Sub(ks.read) < KeyringTTL
}

// CacheKeys publishes the keyring of tenant tid, just written by a
// committed transaction (a new tenant, a rotation): only a committed
// keyring may seal, since a rolled back term would leave records nobody
// can open.
func (b *Barrier) CacheKeys(tid string, ks *Keys) {
	ks.read = b.now()
	b.cacheKeys(map[string]*Keys{tid: ks})
}

// ForgetKeys drops tenant tid's cached keyring (its tenant is deleted):
// a keyring is read again when needed.
func (b *Barrier) ForgetKeys(tid string) { b.tenants.Delete(tid) }

func (b *Barrier) cacheRead(tx *Tx) { b.cacheKeys(tx.read) }

// cacheKeys publishes key sets read or written by a committed
// transaction. A key set never replaces one with a newer active term or
// FPE key version, which a transaction that began earlier could otherwise
// bring back. (Both only grow, each rotation starting from the keyring
// it read in its own transaction.)
func (b *Barrier) cacheKeys(sets map[string]*Keys) {
	if len(sets) == 0 {
		return
	}
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	for tid, ks := range sets {
		if cur, ok := b.tenants.Load(tid); ok && (cur.(*Keys).ring.ActiveTerm() > ks.ring.ActiveTerm() || cur.(*Keys).FPEVersion() > ks.FPEVersion()) {
			continue
		}
		b.tenants.Store(tid, ks)
	}
}
