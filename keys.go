package tokenvault

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
)

// keySet is what the master key wraps: a keyring that seals records, and an
// HMAC key for index entries derived from secrets. The index key is never
// rotated, because the indexes it builds must stay findable.
type keySet struct {
	ring     *seal.Keyring
	indexKey []byte
	// read is when (on the Vault's clock) the keyring was read from the
	// store or written, for the freshness of cached copies (keyringTTL).
	read time.Time
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
	h := hmac.New(sha256.New, k.indexKey)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

type wrappedKeySet struct {
	Ring     []byte `json:"ring"`
	IndexKey []byte `json:"index_key"`
}

// wrap seals a key set with the current master key, bound to its store key.
func (v *Vault) wrap(storeKey string, ks *keySet) []byte {
	ring, err := ks.ring.MarshalBinary()
	if err != nil {
		// A keyring built by seal always marshals.
		panic("tokenvault: keyring does not marshal")
	}
	b, _ := json.Marshal(wrappedKeySet{Ring: ring, IndexKey: ks.indexKey})
	return v.master.Load().Seal([]byte(storeKey), b)
}

func (v *Vault) unwrap(storeKey string, raw []byte) (*keySet, error) {
	b, err := v.master.Load().Open([]byte(storeKey), raw)
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

// txn is one store transaction seen through the Vault: records are sealed
// on the way in and opened on the way out.
type txn struct {
	v   *Vault
	tx  store.Tx
	now time.Time
	// ctx is the call's context, for recording into its CallInfo.
	ctx context.Context
	// authGen is the auth cache's generation read before the store
	// transaction began: what a principal read in it may be cached under.
	authGen uint64
	// created holds key sets written by this transaction, used before they
	// are committed and cached.
	created map[string]*keySet
	// authChanged is set when the transaction writes something a key
	// authenticates through; the auth cache is voided after it commits.
	authChanged bool
	// unchecked is code this transaction found unchecked (see checkCode);
	// updateChecked checks it and runs the transaction again.
	unchecked *uncheckedCode
	// read holds the keyrings this transaction read from the store. They
	// reach the shared cache only once it has committed: a keyring read
	// inside a batch may have been written by a transaction that rolls
	// back, and sealing with it would make records nobody can open.
	read map[string]*keySet
	// tally counts token operations and sweeps for Options.Metrics,
	// reported once the transaction commits (metrics.go). Nil until the
	// transaction counts something, and always nil without Metrics, so
	// that an unmeasured Vault pays nothing for it.
	tally *tally
	// logged counts the audit lines this transaction queued for export,
	// reported to the exporters once it commits (audit_export.go).
	logged int
}

// tenantKeys returns the key set of a tenant, from the cache or the store.
// reload skips the cache, for a ciphertext sealed with a term newer than the
// cached keyring (another instance rotated).
func (t *txn) tenantKeys(tid string, reload bool) (*keySet, error) {
	if ks, ok := t.created[tid]; ok {
		return ks, nil
	}
	if ks, ok := t.read[tid]; ok {
		return ks, nil // this transaction's snapshot cannot have changed
	}
	if !reload {
		if v, ok := t.v.tenants.Load(tid); ok && t.v.fresh(v.(*keySet)) {
			return v.(*keySet), nil
		}
	}
	k := tenantKeyringKey(tid)
	raw, err := t.tx.Get([]byte(k))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		// Deleted with its tenant (tenant_delete.go), or never there.
		return nil, errTenantGone
	}
	ks, err := t.v.unwrap(k, raw)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: unwrap keyring of tenant %s: %w", tid, err)
	}
	ks.read = t.now
	if t.read == nil {
		t.read = map[string]*keySet{}
	}
	t.read[tid] = ks
	return ks, nil
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

// tenantOf returns the tenant id of a key under tenant/.
func tenantOf(key string) string {
	rest, ok := strings.CutPrefix(key, "tenant/")
	if !ok {
		return ""
	}
	tid, _, _ := strings.Cut(rest, "/")
	return tid
}

// getRecord opens the record at key into dst. It reports false when the key
// does not exist.
func (t *txn) getRecord(key string, dst any) (bool, error) {
	raw, err := t.tx.Get([]byte(key))
	if err != nil || raw == nil {
		return false, err
	}
	return true, t.openRecord(key, raw, dst)
}

// openRecord decrypts and decodes a raw value stored at key.
func (t *txn) openRecord(key string, raw []byte, dst any) error {
	b, err := t.open(key, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return nil
}

// keyValue is a copied store entry.
type keyValue struct {
	key   string
	value []byte
}

// scanValues copies every entry under prefix, in order. Decrypting happens
// after the scan, because opening a record may read the store.
func (t *txn) scanValues(prefix string) ([]keyValue, error) {
	var out []keyValue
	err := t.tx.Scan([]byte(prefix), nil, 0, func(k, v []byte) error {
		out = append(out, keyValue{string(k), bytes.Clone(v)})
		return nil
	})
	return out, err
}

// open decrypts a raw value stored at key.
func (t *txn) open(key string, raw []byte) ([]byte, error) {
	tid := tenantOf(key)
	if tid == "" {
		b, err := t.v.sys.ring.Open([]byte(key), raw)
		if err != nil {
			return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
		}
		return b, nil
	}
	ks, err := t.tenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	if term, ok := seal.Term(raw); ok && term > ks.ring.ActiveTerm() {
		if ks, err = t.tenantKeys(tid, true); err != nil {
			return nil, err
		}
	}
	b, err := ks.ring.Open([]byte(key), raw)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
	}
	return b, nil
}

// putRecord seals v (as JSON) under key with the tenant's active data key,
// or the system keyring for keys outside tenant/.
func (t *txn) putRecord(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("tokenvault: encode %s: %w", key, err)
	}
	ring := t.v.sys.ring
	if tid := tenantOf(key); tid != "" {
		ks, err := t.tenantKeys(tid, false)
		if err != nil {
			return err
		}
		ring = ks.ring
	}
	if touchesAuth(key) {
		t.authChanged = true
	}
	return t.tx.Put([]byte(key), ring.Seal([]byte(key), b))
}

// putIndex writes an index entry: the key is the information, the value is
// empty.
func (t *txn) putIndex(key string) error { return t.tx.Put([]byte(key), nil) }

func (t *txn) delete(key string) error {
	if touchesAuth(key) {
		t.authChanged = true
	}
	return t.tx.Delete([]byte(key))
}

// scanKeys calls fn with every key under prefix, in order.
func (t *txn) scanKeys(prefix string, fn func(key string) error) error {
	return t.tx.Scan([]byte(prefix), nil, 0, func(k, _ []byte) error {
		return fn(string(k))
	})
}

// RotateMasterKey re-wraps every keyring in the store with newKey, in one
// transaction, and makes it the current master key. Records are not
// re-encrypted: they are sealed with data keys, which do not change. The
// Vault keeps serving throughout; after RotateMasterKey returns, open the
// store with newKey (the old key may be passed in PreviousMasterKeys, for
// instances not yet restarted).
//
// This is a host-program operation: it takes no API key.
func (v *Vault) RotateMasterKey(ctx context.Context, newKey []byte) error {
	v.wrapMu.Lock()
	defer v.wrapMu.Unlock()
	next, err := v.master.Load().Rotate(newKey)
	if err != nil {
		return &Error{Kind: Invalid, Message: "the new master key is invalid: " + err.Error()}
	}
	err = v.store.Update(ctx, func(tx store.Tx) error {
		rewrap := func(key string) error {
			raw, err := tx.Get([]byte(key))
			if err != nil || raw == nil {
				return err
			}
			b, err := next.Open([]byte(key), raw)
			if err != nil {
				return fmt.Errorf("tokenvault: unwrap %s: %w", key, err)
			}
			return tx.Put([]byte(key), next.Seal([]byte(key), b))
		}
		if err := rewrap(sysKeyringKey); err != nil {
			return err
		}
		var tenants []string
		err := tx.Scan([]byte(sysTenantsKey), nil, 0, func(k, _ []byte) error {
			tenants = append(tenants, strings.TrimPrefix(string(k), sysTenantsKey))
			return nil
		})
		if err != nil {
			return err
		}
		for _, tid := range tenants {
			if err := rewrap(tenantKeyringKey(tid)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return v.result(err)
	}
	v.master.Store(next)
	return nil
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
		k := tenantKeyringKey(tid)
		if err := t.tx.Put([]byte(k), v.wrap(k, rotated)); err != nil {
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
