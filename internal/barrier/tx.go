package barrier

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
)

// Tx is one store transaction seen through the barrier: values are sealed
// on the way in and opened on the way out, with the keyring their key's
// constructor chose, and it notes the writes that change authentication,
// that are not appends, and that change kept counts. Its store.Tx is
// unexported: nothing above the barrier reaches the store.
type Tx struct {
	b   *Barrier
	tx  store.Tx
	ctx context.Context
	now time.Time
	// created holds key sets written by this transaction, used before they
	// are committed and cached.
	created map[string]*Keys
	// read holds the keyrings this transaction read from the store. They
	// reach the shared cache only once it has committed (Barrier.Update).
	read map[string]*Keys
	// authChanged is set when the transaction writes something a key
	// authenticates through (Key.auth); onAuth is called the first time.
	authChanged bool
	onAuth      func()
	// appended counts the writes of new audit entries (SealAppend,
	// AppendIndex) and rewrites every other write: a transaction that
	// only appended may reach the store as an append (appends.go).
	appended, rewrites int
	// snap is the overlay of an optimistic first run (ViewSnapshot), kept
	// once tx is the write transaction it is applied in: the store may
	// run that transaction's function, and so Apply, more than once.
	snap *snapshotTx
	// counts are this transaction's changes to kept counts, written
	// when it commits (FlushCounts).
	counts map[string]*countDelta
}

// OnAuthChange has fn called once, at the first write of t that can
// change what a key authenticates as: the Vault voids its auth cache
// after such a transaction.
func (t *Tx) OnAuthChange(fn func()) { t.onAuth = fn }

// AuthChanged reports whether t wrote something a key authenticates
// through.
func (t *Tx) AuthChanged() bool { return t.authChanged }

// MarkAuthChanged notes a change to what keys authenticate as that no
// key of t says (a tenant marked for deletion refuses every key of it).
func (t *Tx) MarkAuthChanged() {
	if !t.authChanged {
		t.authChanged = true
		if t.onAuth != nil {
			t.onAuth()
		}
	}
}

func (t *Tx) touch(key Key) {
	if key.auth {
		t.MarkAuthChanged()
	}
}

// CreatedKeys gives t the keyring of tenant tid, which t writes: its
// records are sealed with it before it is committed and cached.
func (t *Tx) CreatedKeys(tid string, ks *Keys) {
	if t.created == nil {
		t.created = map[string]*Keys{}
	}
	t.created[tid] = ks
}

// TenantKeys returns the key set of a tenant, from the cache or the store.
// reload skips the cache, for a ciphertext sealed with a term newer than
// the cached keyring (another instance rotated). It returns the
// Config.TenantGone error when the tenant has no keyring.
func (t *Tx) TenantKeys(tid string, reload bool) (*Keys, error) {
	if ks, ok := t.created[tid]; ok {
		return ks, nil
	}
	if ks, ok := t.read[tid]; ok {
		return ks, nil // this transaction's snapshot cannot have changed
	}
	if !reload {
		if v, ok := t.b.tenants.Load(tid); ok && t.b.fresh(v.(*Keys)) {
			return v.(*Keys), nil
		}
	}
	k := Tenant(tid).Keyring()
	raw, err := t.tx.Get([]byte(k.s))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		// Deleted with its tenant, or never there.
		return nil, t.b.gone
	}
	ks, err := t.b.UnwrapKeys(t.ctx, k.s, raw)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: unwrap keyring of tenant %s: %w", tid, err)
	}
	ks.read = t.now
	if t.read == nil {
		t.read = map[string]*Keys{}
	}
	t.read[tid] = ks
	return ks, nil
}

// ring is the keyring that seals the values of k: its tenant's, or the
// system keyring.
func (t *Tx) ring(k Key) (*seal.Keyring, error) {
	if k.tenant == "" {
		return t.b.sys.ring, nil
	}
	ks, err := t.TenantKeys(k.tenant, false)
	if err != nil {
		return nil, err
	}
	return ks.ring, nil
}

// GetOpen returns the plaintext of the record at key; false when the key
// does not exist. The plaintext is the caller's (it may clear it).
func (t *Tx) GetOpen(key Key) ([]byte, bool, error) {
	raw, err := t.tx.Get([]byte(key.s))
	if err != nil || raw == nil {
		return nil, false, err
	}
	b, err := t.Open(key, raw)
	return b, true, err
}

// Open decrypts a raw value stored at key, reloading the keyring when
// the value is sealed with a term newer than the cached one.
func (t *Tx) Open(key Key, raw []byte) ([]byte, error) {
	if key.tenant == "" {
		b, err := t.b.sys.ring.Open([]byte(key.s), raw)
		if err != nil {
			return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
		}
		return b, nil
	}
	ks, err := t.TenantKeys(key.tenant, false)
	if err != nil {
		return nil, err
	}
	if term, ok := seal.Term(raw); ok && term > ks.ring.ActiveTerm() {
		if ks, err = t.TenantKeys(key.tenant, true); err != nil {
			return nil, err
		}
	}
	b, err := ks.ring.Open([]byte(key.s), raw)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
	}
	return b, nil
}

// SealPut seals pt under key with its tenant's active data key, or the
// system keyring for a key of no tenant, and writes it. pt stays the
// caller's.
func (t *Tx) SealPut(key Key, pt []byte) error {
	sealed, err := t.seal(key, pt)
	if err != nil {
		return err
	}
	if err := t.countRecord(key, 1); err != nil {
		return err
	}
	t.touch(key)
	return t.put(key, sealed)
}

// SealAppend is SealPut for a record whose key is new by construction (an
// audit line): nothing reads it before it is written, so a store may take
// it as an append (appends.go).
func (t *Tx) SealAppend(key Key, pt []byte) error {
	sealed, err := t.seal(key, pt)
	if err != nil {
		return err
	}
	t.appended++
	return t.write(key, sealed)
}

func (t *Tx) seal(key Key, pt []byte) ([]byte, error) {
	ring, err := t.ring(key)
	if err != nil {
		return nil, err
	}
	return ring.Seal([]byte(key.s), pt), nil
}

// Reseal seals pt, the plaintext already stored at key, again with the
// active data key. The record does not change, so neither does what any
// key authenticates as.
func (t *Tx) Reseal(key Key, pt []byte) error {
	sealed, err := t.seal(key, pt)
	if err != nil {
		return err
	}
	t.rewrites++
	return t.write(key, sealed)
}

// put writes value at key: every write but an append goes through it or
// counts itself in rewrites. value is t's from then on (see write).
func (t *Tx) put(key Key, value []byte) error {
	t.rewrites++
	return t.write(key, value)
}

// write puts value at key. value must be t's own (a fresh encoding or
// seal, or nil), since an optimistic first run's overlay keeps it as it
// is instead of copying it (snapshotTx.putOwned).
func (t *Tx) write(key Key, value []byte) error {
	if s, ok := t.tx.(*snapshotTx); ok {
		return s.putOwned(key.s, value)
	}
	return t.tx.Put([]byte(key.s), value)
}

// PutIndex writes an index or schedule entry: the key is the information,
// the value is empty.
func (t *Tx) PutIndex(key Key) error { return t.put(key, nil) }

// AppendIndex is PutIndex for an entry named by a new audit line (its
// pending index entry, its export queue entries): see SealAppend.
func (t *Tx) AppendIndex(key Key) error {
	t.appended++
	return t.write(key, nil)
}

// Has reports whether key exists, whatever its value: an index entry, a
// registry entry or a marker.
func (t *Tx) Has(key Key) (bool, error) {
	raw, err := t.tx.Get([]byte(key.s))
	return raw != nil, err
}

// GetPlain returns a copy of the plain (unsealed) value stored at key: a
// progress marker, which holds nothing secret (see doc.go). It reports
// false when the key does not exist. The caller decodes it: the barrier
// knows no record formats.
func (t *Tx) GetPlain(key Key) ([]byte, bool, error) {
	raw, err := t.tx.Get([]byte(key.s))
	if err != nil || raw == nil {
		return nil, false, err
	}
	return bytes.Clone(raw), true, nil
}

// PutPlain stores b at key unsealed: only for the progress markers doc.go
// lists, which hold store keys and times. b is t's from then on.
func (t *Tx) PutPlain(key Key, b []byte) error {
	return t.put(key, b)
}

// Delete removes key; a missing key is not an error.
func (t *Tx) Delete(key Key) error {
	t.touch(key)
	if err := t.countRecord(key, -1); err != nil {
		return err
	}
	t.rewrites++
	return t.tx.Delete([]byte(key.s))
}

// Purge removes key of a tenant being deleted without noting an
// authentication change: the deletion's mark refuses every key of the
// tenant since, so nothing cached can depend on key.
func (t *Tx) Purge(key Key) error {
	t.rewrites++
	return t.tx.Delete([]byte(key.s))
}

// Scan calls fn, in key order, with every key under p after p.Key(after)
// (from the first when after is ""), at most limit of them (0: no limit).
// rest is what follows p in the key. fn may return store.ErrStop to end
// the scan early without an error.
func (t *Tx) Scan(p Prefix, after string, limit int, fn func(k Key, rest string) error) error {
	var a []byte
	if after != "" {
		a = []byte(p.s + after)
	}
	return t.tx.Scan([]byte(p.s), a, limit, func(k, _ []byte) error {
		return fn(p.Found(k))
	})
}

// ScanBack calls fn, in descending key order, with every key under p
// before p.Key(before) (from the last when before is ""), at most limit
// of them (0: no limit): Scan, backwards.
func (t *Tx) ScanBack(p Prefix, before string, limit int, fn func(k Key, rest string) error) error {
	var b []byte
	if before != "" {
		b = []byte(p.s + before)
	}
	return t.tx.ScanReverse([]byte(p.s), b, limit, func(k, _ []byte) error {
		return fn(p.Found(k))
	})
}

// ScanKeys calls fn with every key under p, in order (see Scan).
func (t *Tx) ScanKeys(p Prefix, fn func(k Key, rest string) error) error {
	return t.Scan(p, "", 0, fn)
}

// StoredValue is a copied store entry: its key, what follows the scanned
// prefix in it, and its raw (sealed, or empty) value.
type StoredValue struct {
	Key  Key
	Rest string
	Raw  []byte
}

// ScanValues copies every entry under p, in order. Decrypting happens
// after the scan (Open), because opening a record may read the store.
func (t *Tx) ScanValues(p Prefix) ([]StoredValue, error) {
	return t.ScanValuesAfter(p, "", 0)
}

// ScanValuesAfter copies up to limit entries (0: all) under p after
// p.Key(after) (from the first when after is "").
func (t *Tx) ScanValuesAfter(p Prefix, after string, limit int) ([]StoredValue, error) {
	var a []byte
	if after != "" {
		a = []byte(p.s + after)
	}
	var out []StoredValue
	err := t.tx.Scan([]byte(p.s), a, limit, func(k, v []byte) error {
		key, rest := p.Found(k)
		out = append(out, StoredValue{key, rest, bytes.Clone(v)})
		return nil
	})
	return out, err
}

// ScanValuesBack copies up to limit entries (0: all) under p before
// p.Key(before) (from the last when before is ""), in descending key
// order: ScanValuesAfter, backwards.
func (t *Tx) ScanValuesBack(p Prefix, before string, limit int) ([]StoredValue, error) {
	var b []byte
	if before != "" {
		b = []byte(p.s + before)
	}
	var out []StoredValue
	err := t.tx.ScanReverse([]byte(p.s), b, limit, func(k, v []byte) error {
		key, rest := p.Found(k)
		out = append(out, StoredValue{key, rest, bytes.Clone(v)})
		return nil
	})
	return out, err
}

// GetWrapped returns the wrapped keyring stored at key, or nil.
func (t *Tx) GetWrapped(key Key) ([]byte, error) {
	raw, err := t.tx.Get([]byte(key.s))
	return bytes.Clone(raw), err
}

// PutWrapped stores a keyring already wrapped for key.
func (t *Tx) PutWrapped(key Key, wrapped []byte) error {
	t.rewrites++
	return t.tx.Put([]byte(key.s), wrapped)
}

// PutKeyring wraps ks with the current key wrapper, bound to key, and
// stores it there.
func (t *Tx) PutKeyring(key Key, ks *Keys) error {
	w, err := t.b.wrap(t.ctx, key.s, ks)
	if err != nil {
		return err
	}
	return t.PutWrapped(key, w)
}

// Keyrings calls fn with the key and stored (wrapped) value of the system
// keyring and of every tenant's keyring.
func (t *Tx) Keyrings(fn func(key Key, raw []byte) error) error {
	keys := []Key{SysKeyring}
	err := t.ScanKeys(TenantRegistry, func(_ Key, tid string) error {
		keys = append(keys, Tenant(tid).Keyring())
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range keys {
		raw, err := t.GetWrapped(key)
		if err != nil {
			return err
		}
		if raw == nil {
			continue
		}
		if err := fn(key, raw); err != nil {
			return err
		}
	}
	return nil
}

// SharedGeneration reads the store's auth generation when the store keeps
// one for the processes sharing it (store.Generation): shared is false
// when it does not, advanced is true when this transaction (or one
// sharing its database transaction) advanced it.
func (t *Tx) SharedGeneration() (gen uint64, advanced, shared bool, err error) {
	g, ok := t.tx.(store.Generation)
	if !ok {
		return 0, false, false, nil
	}
	gen, advanced, err = g.Generation()
	return gen, advanced, true, err
}

// AdvanceSharedGeneration advances the store's auth generation in this
// transaction's commit, on a store that keeps one.
func (t *Tx) AdvanceSharedGeneration() error {
	if g, ok := t.tx.(store.Generation); ok {
		return g.AdvanceGeneration()
	}
	return nil
}

// ReadOutside tells an optimistic first run (optimistic.go) that t read
// something kept outside the store; same reports whether it would still
// read the same, and the write transaction runs the function again if
// not. In a plain transaction, which runs alone, there is nothing to do.
func (t *Tx) ReadOutside(same func() bool) {
	if snap, ok := t.tx.(*snapshotTx); ok {
		snap.check(same)
	}
}
