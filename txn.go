package tokenvault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"time"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
)

// The barrier. This file is the only one that reads or writes a store.Tx:
// everything above it goes through a txn, which seals values on the way in
// and opens them on the way out, with the keyring the key's constructor
// chose (keyspace.go), and notes the writes that change authentication.
// The store itself is untrusted; the few values it holds unsealed are
// listed in keyspace.go (empty index and schedule entries, plain progress
// markers, wrapped keyrings), and TestStoreIsSealed walks a store to hold
// the rest to it. (optimistic.go wraps a store.Tx too, beneath the txn:
// its snapshotTx only defers and checks what a txn reads and writes.)

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
	// fpWritten and fpRemoved are this transaction's changes to the memory
	// fingerprint index; the removals wait for its commit (fpindex.go).
	fpWritten, fpRemoved []fingerprintEntry
	// pendingOf are the tenants this transaction wrote pending log index
	// entries for; the indexer is told once they are committed
	// (logindex.go).
	pendingOf []string
	// appended counts the writes of new audit entries (appendRecord,
	// appendIndex) and rewrites every other write: a transaction that only
	// appended may reach the store as an append (appends.go).
	appended, rewrites int
	// counts are this transaction's changes to kept counts, written
	// when it commits (flushCounts, token_lists.go).
	counts map[string]*countDelta
	// listShapes caches the list index prefixes and counts of the token
	// shapes this transaction wrote (token_lists.go).
	listShapes map[string]*listShape
}

// view runs fn in a read-only store transaction.
func (v *Vault) view(ctx context.Context, fn func(*txn) error) error {
	ctx = withCall(ctx)
	var last *txn
	gen := v.auth.gen.Load()
	err := v.store.View(ctx, func(tx store.Tx) error {
		last = &txn{v: v, tx: tx, now: v.now().UTC(), ctx: ctx, authGen: gen}
		return fn(last)
	})
	if last != nil {
		v.cacheKeys(last.read) // a read transaction sees only committed data
	}
	return v.result(err)
}

// update runs fn in a read-write store transaction: everything fn writes,
// audit log lines included, lands together or not at all.
func (v *Vault) update(ctx context.Context, fn func(*txn) error) error {
	ctx = withCall(ctx)
	var last *txn
	gen := v.auth.gen.Load()
	err := v.store.Update(ctx, func(tx store.Tx) error {
		last = &txn{v: v, tx: tx, now: v.now().UTC(), ctx: ctx, authGen: gen}
		if err := fn(last); err != nil {
			return err
		}
		if err := last.flushCounts(); err != nil {
			return err
		}
		return last.advanceAuthGeneration() // in the same commit (auth_cache.go)
	})
	return v.finish(last, err)
}

// keyringTxn runs fn in a store transaction (read-write when write)
// without the Vault's bookkeeping: no auth cache, no keyring cache, no
// error translation. It is for the work on keyrings themselves (opening
// the store, rotating the key wrapper), which must see the store's and the
// wrapper's errors as they are.
func (v *Vault) keyringTxn(ctx context.Context, write bool, fn func(*txn) error) error {
	run := func(tx store.Tx) error {
		return fn(&txn{v: v, tx: tx, now: v.now().UTC(), ctx: ctx})
	}
	if write {
		return v.store.Update(ctx, run)
	}
	return v.store.View(ctx, run)
}

// finish does what follows a write transaction whose last run was last
// (nil if it never ran) and which ended with err: it voids the auth cache
// if the transaction touched authentication, and once committed caches the
// keyrings it read, reports its tallies and tells the audit exporters.
func (v *Vault) finish(last *txn, err error) error {
	last.settleFingerprints(err == nil)
	if last != nil {
		// After the commit: an indexer pass between the mark and the
		// commit would find nothing, and unmark the tenant for good. On
		// a failed commit too, since a backend may fail after writing; a
		// pass that finds nothing costs a scan.
		for _, tid := range last.pendingOf {
			v.pendingTenants.mark(tid)
		}
	}
	if last != nil && last.authChanged {
		// Void the cache before the caller hears of the change; on a
		// failed commit too, since a backend may fail after writing.
		v.auth.invalidate()
		v.appendsSettled()
	}
	if err == nil && last != nil {
		v.cacheKeys(last.read)
		if last.tally != nil {
			last.tally.report(v.metrics)
		}
		if last.logged > 0 {
			v.auditCommitted(last.logged, last.now)
		}
	}
	return v.result(err)
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
	k := barrier.Tenant(tid).Keyring()
	raw, err := t.tx.Get([]byte(k.String()))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		// Deleted with its tenant (tenant_delete.go), or never there.
		return nil, errTenantGone
	}
	ks, err := t.v.unwrap(t.ctx, k.String(), raw)
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

// ring is the keyring that seals the values of k: its tenant's, or the
// system keyring.
func (t *txn) ring(k barrier.Key) (*seal.Keyring, error) {
	if k.Tenant() == "" {
		return t.v.sys.ring, nil
	}
	ks, err := t.tenantKeys(k.Tenant(), false)
	if err != nil {
		return nil, err
	}
	return ks.ring, nil
}

// getRecord opens the record at key into dst. It reports false when the key
// does not exist.
func (t *txn) getRecord(key barrier.Key, dst any) (bool, error) {
	raw, err := t.tx.Get([]byte(key.String()))
	if err != nil || raw == nil {
		return false, err
	}
	return true, t.openRecord(key, raw, dst)
}

// openRecord decrypts and decodes a raw value stored at key.
func (t *txn) openRecord(key barrier.Key, raw []byte, dst any) error {
	b, err := t.open(key, raw)
	if err != nil {
		return err
	}
	if c, ok := dst.(recordCodec); ok {
		err = c.decodeRecord(key, b)
		clear(b) // the plaintext may hold token data
		if err != nil {
			return fmt.Errorf("tokenvault: decode %s: %w", key, err)
		}
		return nil
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return nil
}

// open decrypts a raw value stored at key.
func (t *txn) open(key barrier.Key, raw []byte) ([]byte, error) {
	if key.Tenant() == "" {
		b, err := t.v.sys.ring.Open([]byte(key.String()), raw)
		if err != nil {
			return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
		}
		return b, nil
	}
	ks, err := t.tenantKeys(key.Tenant(), false)
	if err != nil {
		return nil, err
	}
	if term, ok := seal.Term(raw); ok && term > ks.ring.ActiveTerm() {
		if ks, err = t.tenantKeys(key.Tenant(), true); err != nil {
			return nil, err
		}
	}
	b, err := ks.ring.Open([]byte(key.String()), raw)
	if err != nil {
		return nil, fmt.Errorf("tokenvault: open %s: %w", key, err)
	}
	return b, nil
}

// putRecord seals v under key with its tenant's active data key, or the
// system keyring for a key of no tenant: in its own encoding when it has
// one (a recordCodec, records.go), else as JSON.
func (t *txn) putRecord(key barrier.Key, v any) error {
	sealed, err := t.sealRecord(key, v)
	if err != nil {
		return err
	}
	if err := t.countRecord(key, 1); err != nil {
		return err
	}
	if key.Auth() {
		t.authChanged = true
	}
	return t.put(key, sealed)
}

// appendRecord is putRecord for a record whose key is new by construction
// (an audit line): nothing reads it before it is written, so a store may
// take it as an append (appends.go).
func (t *txn) appendRecord(key barrier.Key, v any) error {
	sealed, err := t.sealRecord(key, v)
	if err != nil {
		return err
	}
	t.appended++
	return t.write(key, sealed)
}

// sealRecord encodes and seals v for key (see putRecord).
func (t *txn) sealRecord(key barrier.Key, v any) ([]byte, error) {
	var b []byte
	if c, ok := v.(recordCodec); ok {
		enc, release, err := encodeRecord(c, key)
		if err != nil {
			return nil, err
		}
		defer release()
		b = enc
	} else {
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("tokenvault: encode %s: %w", key, err)
		}
		b = enc
	}
	ring, err := t.ring(key)
	if err != nil {
		return nil, err
	}
	return ring.Seal([]byte(key.String()), b), nil
}

// put writes value at key: every write but an append goes through it or
// counts itself in rewrites. value is t's from then on (see write).
func (t *txn) put(key barrier.Key, value []byte) error {
	t.rewrites++
	return t.write(key, value)
}

// write puts value at key. value must be t's own (a fresh encoding or
// seal, or nil), since an optimistic first run's overlay keeps it as it
// is instead of copying it (snapshotTx.putOwned).
func (t *txn) write(key barrier.Key, value []byte) error {
	if s, ok := t.tx.(*snapshotTx); ok {
		return s.putOwned(key.String(), value)
	}
	return t.tx.Put([]byte(key.String()), value)
}

// resealRecord seals pt, the plaintext already stored at key, again with
// the active data key (reseal.go). The record does not change, so neither
// does what any key authenticates as.
func (t *txn) resealRecord(key barrier.Key, pt []byte) error {
	ring, err := t.ring(key)
	if err != nil {
		return err
	}
	t.rewrites++
	return t.write(key, ring.Seal([]byte(key.String()), pt))
}

// putIndex writes an index or schedule entry: the key is the information,
// the value is empty.
func (t *txn) putIndex(key barrier.Key) error { return t.put(key, nil) }

// appendIndex is putIndex for an entry named by a new audit line (its
// pending index entry, its export queue entries): see appendRecord.
func (t *txn) appendIndex(key barrier.Key) error {
	t.appended++
	return t.write(key, nil)
}

// has reports whether key exists, whatever its value: an index entry, a
// registry entry or a marker.
func (t *txn) has(key barrier.Key) (bool, error) {
	raw, err := t.tx.Get([]byte(key.String()))
	return raw != nil, err
}

// getPlain decodes the plain JSON stored at key (a progress marker, which
// holds nothing secret: see keyspace.go) into dst. It reports false when
// the key does not exist.
func (t *txn) getPlain(key barrier.Key, dst any) (bool, error) {
	raw, err := t.tx.Get([]byte(key.String()))
	if err != nil || raw == nil {
		return false, err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return true, fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return true, nil
}

// putPlain stores v at key as plain JSON, unsealed: only for the progress
// markers keyspace.go lists, which hold store keys and times.
func (t *txn) putPlain(key barrier.Key, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("tokenvault: encode %s: %w", key, err)
	}
	return t.put(key, b)
}

// delete removes key; a missing key is not an error.
func (t *txn) delete(key barrier.Key) error {
	if key.Auth() {
		t.authChanged = true
	}
	if err := t.countRecord(key, -1); err != nil {
		return err
	}
	t.rewrites++
	return t.tx.Delete([]byte(key.String()))
}

// countRecord counts a record of a counted kind (keyspace.go) that
// putRecord writes (delta 1) or delete removes (-1), when that changes
// whether it exists: one more read, for records that are written seldom.
func (t *txn) countRecord(key barrier.Key, delta int64) error {
	if key.Counted() == "" {
		return nil
	}
	raw, err := t.tx.Get([]byte(key.String()))
	if err != nil {
		return err
	}
	if (raw == nil) == (delta > 0) {
		t.addCount(barrier.Tenant(key.Tenant()).Count(key.Counted()), delta)
	}
	return nil
}

// purge removes key of a tenant being deleted without voiding the auth
// cache: markDeleting voided it, and authentication refuses every key of
// the tenant since, so nothing cached can depend on key (tenant_delete.go).
func (t *txn) purge(key barrier.Key) error {
	t.rewrites++
	return t.tx.Delete([]byte(key.String()))
}

// scan calls fn, in key order, with every key under p after p.key(after)
// (from the first when after is ""), at most limit of them (0: no limit).
// rest is what follows p in the key. fn may return store.ErrStop to end
// the scan early without an error.
func (t *txn) scan(p barrier.Prefix, after string, limit int, fn func(k barrier.Key, rest string) error) error {
	var a []byte
	if after != "" {
		a = []byte(p.String() + after)
	}
	return t.tx.Scan([]byte(p.String()), a, limit, func(k, _ []byte) error {
		return fn(p.Found(k))
	})
}

// scanBack calls fn, in descending key order, with every key under p
// before p.key(before) (from the last when before is ""), at most limit
// of them (0: no limit): scan, backwards. It lets a newest-first list
// read only its page (ListLogs).
func (t *txn) scanBack(p barrier.Prefix, before string, limit int, fn func(k barrier.Key, rest string) error) error {
	var b []byte
	if before != "" {
		b = []byte(p.String() + before)
	}
	return t.tx.ScanReverse([]byte(p.String()), b, limit, func(k, _ []byte) error {
		return fn(p.Found(k))
	})
}

// scanKeys calls fn with every key under p, in order (see scan).
func (t *txn) scanKeys(p barrier.Prefix, fn func(k barrier.Key, rest string) error) error {
	return t.scan(p, "", 0, fn)
}

// storedValue is a copied store entry: its key, what follows the scanned
// prefix in it, and its raw (sealed, or empty) value.
type storedValue struct {
	key  barrier.Key
	rest string
	raw  []byte
}

// scanValues copies every entry under p, in order. Decrypting happens
// after the scan, because opening a record may read the store.
func (t *txn) scanValues(p barrier.Prefix) ([]storedValue, error) {
	return t.scanValuesAfter(p, "", 0)
}

// scanValuesAfter copies up to limit entries (0: all) under p after
// p.key(after) (from the first when after is "").
func (t *txn) scanValuesAfter(p barrier.Prefix, after string, limit int) ([]storedValue, error) {
	var a []byte
	if after != "" {
		a = []byte(p.String() + after)
	}
	var out []storedValue
	err := t.tx.Scan([]byte(p.String()), a, limit, func(k, v []byte) error {
		key, rest := p.Found(k)
		out = append(out, storedValue{key, rest, bytes.Clone(v)})
		return nil
	})
	return out, err
}

// scanValuesBack copies up to limit entries (0: all) under p before
// p.key(before) (from the last when before is ""), in descending key
// order: scanValuesAfter, backwards.
func (t *txn) scanValuesBack(p barrier.Prefix, before string, limit int) ([]storedValue, error) {
	var b []byte
	if before != "" {
		b = []byte(p.String() + before)
	}
	var out []storedValue
	err := t.tx.ScanReverse([]byte(p.String()), b, limit, func(k, v []byte) error {
		key, rest := p.Found(k)
		out = append(out, storedValue{key, rest, bytes.Clone(v)})
		return nil
	})
	return out, err
}

// getWrapped returns the wrapped keyring stored at key, or nil.
func (t *txn) getWrapped(key barrier.Key) ([]byte, error) {
	raw, err := t.tx.Get([]byte(key.String()))
	return bytes.Clone(raw), err
}

// putWrapped stores a keyring already wrapped for key.
func (t *txn) putWrapped(key barrier.Key, wrapped []byte) error {
	t.rewrites++
	return t.tx.Put([]byte(key.String()), wrapped)
}

// putKeyring wraps ks with the current key wrapper, bound to key, and
// stores it there.
func (t *txn) putKeyring(key barrier.Key, ks *keySet) error {
	w, err := t.v.wrap(t.ctx, key.String(), ks)
	if err != nil {
		return err
	}
	return t.putWrapped(key, w)
}

// keyrings calls fn with the key and stored (wrapped) value of the system
// keyring and of every tenant's keyring.
func (t *txn) keyrings(fn func(key barrier.Key, raw []byte) error) error {
	keys := []barrier.Key{barrier.SysKeyring}
	err := t.scanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
		keys = append(keys, barrier.Tenant(tid).Keyring())
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range keys {
		raw, err := t.getWrapped(key)
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

// sharedGeneration reads the store's auth generation when the store keeps
// one for the processes sharing it (store.Generation; auth_cache.go):
// shared is false when it does not, advanced is true when this
// transaction (or one sharing its database transaction) advanced it.
func (t *txn) sharedGeneration() (gen uint64, advanced, shared bool, err error) {
	g, ok := t.tx.(store.Generation)
	if !ok {
		return 0, false, false, nil
	}
	gen, advanced, err = g.Generation()
	return gen, advanced, true, err
}

// advanceSharedGeneration advances the store's auth generation in this
// transaction's commit, on a store that keeps one.
func (t *txn) advanceSharedGeneration() error {
	if g, ok := t.tx.(store.Generation); ok {
		return g.AdvanceGeneration()
	}
	return nil
}

// readOutside tells an optimistic first run (optimistic.go) that t read
// something kept outside the store; same reports whether it would still
// read the same, and the write transaction runs the function again if not.
// In a plain transaction, which runs alone, there is nothing to do.
func (t *txn) readOutside(same func() bool) {
	if snap, ok := t.tx.(*snapshotTx); ok {
		snap.check(same)
	}
}
