package tokenvault

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/seal"
)

// keySet is what the key wrapper wraps: a keyring that seals records, and an
// HMAC key for index entries derived from secrets. The index key is never
// rotated, because the indexes it builds must stay findable.
type keySet struct {
	ring     *seal.Keyring
	indexKey []byte
	// read is when (on the Vault's clock) the keyring was read from the
	// store or written, for the freshness of cached copies (keyringTTL).
	read time.Time
	// macs keeps HMAC-SHA256 hashers keyed with indexKey for mac: keying
	// one costs two SHA-256 blocks and three allocations, and every token
	// takes one MAC per fingerprint, search index and metadata entry.
	macs sync.Pool
}

// String keeps key bytes out of any log line that prints a keySet.
func (k *keySet) String() string { return "tokenvault.keySet{...}" }

func newKeySet() (*keySet, error) {
	ring, err := seal.NewKeyring(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: new keyring: %w", err)
	}
	ik, err := seal.RandomKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: new index key: %w", err)
	}
	return &keySet{ring: ring, indexKey: ik}, nil
}

// mac is the keyed hash used wherever a secret must be looked up.
func (k *keySet) mac(parts ...[]byte) []byte {
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

type wrappedKeySet struct {
	Ring     []byte `json:"ring"`
	IndexKey []byte `json:"index_key"`
}

// wrap wraps a key set with the current key wrapper, bound to its store
// key.
func (v *Vault) wrap(ctx context.Context, storeKey string, ks *keySet) ([]byte, error) {
	ring, err := ks.ring.MarshalBinary()
	if err != nil {
		// A keyring built by seal always marshals.
		panic("tokenvault: keyring does not marshal")
	}
	b, _ := json.Marshal(wrappedKeySet{Ring: ring, IndexKey: ks.indexKey})
	return v.wrappers.Load().wrap(ctx, storeKey, b)
}

func (v *Vault) unwrap(ctx context.Context, storeKey string, raw []byte) (*keySet, error) {
	b, err := v.wrappers.Load().unwrap(ctx, storeKey, raw)
	if err != nil {
		return nil, err
	}
	var w wrappedKeySet
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("tokenvault: keyring record: %w", err)
	}
	ring, err := seal.UnmarshalKeyring(w.Ring)
	if err != nil {
		return nil, err
	}
	return &keySet{ring: ring, indexKey: w.IndexKey}, nil
}

// keyringTTL bounds how long an instance that shares its store with
// others seals with a cached keyring: after another instance rotates a
// data key, every instance seals with the new term within keyringTTL. A
// store used by one process only is never changed behind the cache.
const keyringTTL = 5 * time.Second

// fresh reports whether a cached key set may still seal.
func (v *Vault) fresh(ks *keySet) bool {
	return v.auth.enabled || v.now().Sub(ks.read) < keyringTTL
}

// cacheKeys publishes key sets read or written by a committed
// transaction. A key set never replaces one with a newer active term,
// which a transaction that began earlier could otherwise bring back.
func (v *Vault) cacheKeys(sets map[string]*keySet) {
	if len(sets) == 0 {
		return
	}
	v.keysMu.Lock()
	defer v.keysMu.Unlock()
	for tid, ks := range sets {
		if cur, ok := v.tenants.Load(tid); ok && cur.(*keySet).ring.ActiveTerm() > ks.ring.ActiveTerm() {
			continue
		}
		v.tenants.Store(tid, ks)
	}
}

// RotateMasterKey re-wraps every keyring in the store with newKey, in one
// transaction, and makes it the current master key (a local KeyWrapper).
// Records are not re-encrypted: they are sealed with data keys, which do
// not change. The Vault keeps serving throughout; after RotateMasterKey
// returns, open the store with newKey (the old key may be passed in
// PreviousMasterKeys, for instances not yet restarted). A Vault whose
// KeyWrapper is an HSM or KMS moves back to a local key this way.
//
// This is a host-program operation: it takes no API key. Returns Invalid
// when newKey is not 32 bytes.
func (v *Vault) RotateMasterKey(ctx context.Context, newKey []byte) error {
	next, err := NewLocalKeyWrapper(newKey)
	if err != nil {
		return &Error{Kind: Invalid, Message: "the new master key is invalid: " + err.Error()}
	}
	return v.RotateKeyWrapper(ctx, next)
}

// RotateKeyWrapper re-wraps every keyring in the store (the system
// keyring and every tenant's) with next, in one transaction, and makes
// next the current key wrapper; the wrappers before it still unwrap in
// this Vault. next may be a new key or key version of the same kind of
// wrapper, or another kind: a local master key to an HSM (keywrap/pkcs11)
// or a KMS (keywrap/kms), and back. Keyrings wrapped by a bare master key
// before key wrappers existed are re-wrapped too. Records are not
// re-encrypted.
//
// The Vault keeps serving throughout: writes that wrap a keyring (a new
// tenant, a data key rotation) wait for the rotation. If it fails, nothing
// changed; running it again is harmless, so a crash at any point is
// recovered by opening with both wrappers (KeyWrapper next,
// PreviousKeyWrappers the old one) and rotating again. After it returns,
// open the store with next.
//
// This is a host-program operation: it takes no API key.
func (v *Vault) RotateKeyWrapper(ctx context.Context, next KeyWrapper) error {
	if next == nil {
		return &Error{Kind: Invalid, Message: "the new key wrapper is nil"}
	}
	if k := next.Kind(); k == "" || len(k) > maxKindLen {
		return &Error{Kind: Invalid, Message: "the new key wrapper's kind must be 1 to 32 bytes"}
	}
	v.wrapMu.Lock()
	defer v.wrapMu.Unlock()
	ws := v.wrappers.Load().then(next)
	err := v.keyringTxn(ctx, true, func(t *txn) error {
		return t.keyrings(func(key barrier.Key, raw []byte) error {
			b, err := ws.unwrap(ctx, key.String(), raw)
			if err != nil {
				return err
			}
			w, err := ws.wrap(ctx, key.String(), b)
			if err != nil {
				return err
			}
			return t.putWrapped(key, w)
		})
	})
	if err != nil {
		return v.result(err)
	}
	v.wrappers.Store(ws)
	return nil
}

// WrappedKeys counts the store's keyrings (the system keyring and every
// tenant's) by the wrapper kind, key id and version that wrapped them,
// read from their envelopes without unwrapping anything: after a rotation,
// every keyring should be under the new wrapper. Sorted by kind, key id,
// version. This is a host-program operation: it takes no API key.
func (v *Vault) WrappedKeys(ctx context.Context) ([]WrappedKeyCount, error) {
	counts := map[WrappedKeyCount]int{}
	err := v.keyringTxn(ctx, false, func(t *txn) error {
		return t.keyrings(func(key barrier.Key, raw []byte) error {
			w, legacy, err := unmarshalEnvelope(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			counts[WrappedKeyCount{Kind: w.Kind, KeyID: w.KeyID, Version: w.Version, Legacy: legacy}]++
			return nil
		})
	})
	if err != nil {
		return nil, v.result(err)
	}
	out := make([]WrappedKeyCount, 0, len(counts))
	for c, n := range counts {
		c.Count = n
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b WrappedKeyCount) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.KeyID, b.KeyID), cmp.Compare(a.Version, b.Version), cmpBool(a.Legacy, b.Legacy))
	})
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// RotateDataKey adds a new data key to the caller's tenant keyring: records
// written from now on are sealed with it, and records sealed with older
// terms still open until Reseal (run by the background sweeper) has sealed
// them again with the new one. Requires tenant:update.
func (v *Vault) RotateDataKey(ctx context.Context, key string) error {
	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	var rotated *keySet
	var tid string
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		tid = p.tenantID
		ks, err := t.tenantKeys(tid, true)
		if err != nil {
			return err
		}
		ring, err := ks.ring.Rotate(rand.Reader)
		if err != nil {
			return err
		}
		rotated = &keySet{ring: ring, indexKey: ks.indexKey}
		if err := t.putKeyring(barrier.Tenant(tid).Keyring(), rotated); err != nil {
			return err
		}
		if err := t.scheduleReseal(tid); err != nil {
			return err
		}
		return t.log(p.actor(), tid, EntityTenant, tid, OpUpdate, fmt.Sprintf("Data key rotated to term %d", ring.ActiveTerm()))
	})
	if err != nil {
		return err
	}
	// Only a committed keyring may seal: a rolled back term would leave
	// records nobody can open.
	rotated.read = v.now()
	v.cacheKeys(map[string]*keySet{tid: rotated})
	return nil
}
