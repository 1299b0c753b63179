package barrier

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/tokenvault/tokenvault/store"
)

// Optimistic runs (the root's updateOptimistic says when and why).
//
// A first run executes the transaction function in a read-only
// transaction, which runs beside the store's single writer, with its
// writes kept aside (snapshotTx) and every read remembered. Then a short
// write transaction checks that every read would still answer the same
// and, if so, only puts what the function wrote (Apply); otherwise the
// caller runs the function again inside the write transaction.

// ViewSnapshot runs fn as an optimistic first run: in a read-only store
// transaction whose writes are kept aside and whose reads are remembered,
// for Apply (or TryAppend) to commit them. It returns fn's Tx.
func (b *Barrier) ViewSnapshot(ctx context.Context, fn func(*Tx) error) (*Tx, error) {
	var first *Tx
	err := b.store.View(ctx, func(stx store.Tx) error {
		snap := newSnapshotTx(stx)
		first = b.newTx(ctx, snap)
		first.snap = snap
		return fn(first)
	})
	return first, err
}

// Apply commits first, an optimistic first run (ViewSnapshot), in tx, a
// Tx of Barrier.Update, when tx still reads what first read; it reports
// false, having written nothing, when not. Once applied, first writes in
// tx's store transaction (for what the commit adds: counts, the auth
// generation), and the keyrings it read join tx's, for the cache.
func (first *Tx) Apply(tx *Tx) (bool, error) {
	snap := first.snap
	if snap == nil {
		return false, errors.New("tokenvault: applying a transaction that is not a first run")
	}
	same, err := snap.stillReads(tx.tx)
	if err != nil || !same {
		return false, err
	}
	if err := snap.apply(tx.tx); err != nil {
		return false, err
	}
	first.tx = tx.tx
	for tid, ks := range first.read {
		if tx.read == nil {
			tx.read = map[string]*Keys{}
		}
		tx.read[tid] = ks
	}
	return true, nil
}

// snapshotTx is the store.Tx of an optimistic first run: reads come from a
// read-only transaction (through the writes made so far), writes go to an
// overlay, and both are remembered for stillReads and apply.
type snapshotTx struct {
	snap store.Tx
	// writes holds the latest write of each key: a value, or nil for a
	// delete (a Put of an empty value stores an empty, non-nil slice).
	writes map[string][]byte
	gets   []observedGet
	scans  []observedScan
	// checks are reads of what is not in the store (the memory
	// fingerprint index, internal/tokens/fingerprints.go): each reports whether it would still
	// answer the same.
	checks []func() bool
}

// check remembers a read outside the store, to be repeated by stillReads.
func (s *snapshotTx) check(same func() bool) { s.checks = append(s.checks, same) }

// observedGet is a Get the snapshot answered: value is nil when the key
// did not exist.
type observedGet struct {
	key, value []byte
}

// keyValue is a copied store entry.
type keyValue struct {
	key   string
	value []byte
}

// observedScan is the part of a Scan the snapshot answered: the entries it
// gave after `after` under prefix, up to and including bound (to the end of
// the prefix when bound is nil).
type observedScan struct {
	prefix, after, bound []byte
	entries              []keyValue
}

func newSnapshotTx(snap store.Tx) *snapshotTx {
	return &snapshotTx{snap: snap, writes: map[string][]byte{}}
}

func (s *snapshotTx) Get(key []byte) ([]byte, error) {
	if v, ok := s.writes[string(key)]; ok {
		return bytes.Clone(v), nil
	}
	v, err := s.snap.Get(key)
	if err != nil {
		return nil, err
	}
	s.gets = append(s.gets, observedGet{key: bytes.Clone(key), value: bytes.Clone(v)})
	return v, nil
}

// errEmptyKey is what every store answers a write of an empty key with.
var errEmptyKey = errors.New("tokenvault: empty store key")

func (s *snapshotTx) Put(key, value []byte) error {
	return s.putOwned(string(key), bytes.Clone(value))
}

// putOwned is Put of a key and value the overlay may keep as they are:
// the caller gives value up (Tx.write).
func (s *snapshotTx) putOwned(key string, value []byte) error {
	if key == "" {
		return errEmptyKey
	}
	if value == nil {
		value = []byte{}
	}
	s.writes[key] = value
	return nil
}

func (s *snapshotTx) Delete(key []byte) error {
	if len(key) == 0 {
		return nil // no such key, as in every store
	}
	s.writes[string(key)] = nil
	return nil
}

// Scan merges the snapshot's entries with the overlay's, in key order, the
// overlay winning (and its deletes hiding entries).
func (s *snapshotTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	pending := s.overlayKeys(prefix, after)
	obs := observedScan{prefix: bytes.Clone(prefix), after: bytes.Clone(after)}
	emitted := 0
	var last []byte // the last key given to fn
	stopped := false
	// emit gives one merged entry to fn; it reports whether to go on.
	emit := func(k, v []byte) (bool, error) {
		last = k
		emitted++
		err := fn(k, v)
		switch {
		case errors.Is(err, store.ErrStop):
			return false, nil
		case err != nil:
			return false, err
		}
		return limit <= 0 || emitted < limit, nil
	}
	// flush emits the overlay's puts before key k (all when k is nil).
	flush := func(k []byte) (bool, error) {
		for len(pending) > 0 && (k == nil || pending[0] < string(k)) {
			key := pending[0]
			pending = pending[1:]
			if v := s.writes[key]; v != nil {
				if goOn, err := emit([]byte(key), v); !goOn || err != nil {
					return goOn, err
				}
			}
		}
		return true, nil
	}
	var fnErr error
	err := s.snap.Scan(prefix, after, 0, func(k, v []byte) error {
		obs.entries = append(obs.entries, keyValue{key: string(k), value: bytes.Clone(v)})
		goOn, err := flush(k)
		if err == nil && goOn {
			if len(pending) > 0 && pending[0] == string(k) {
				pending = pending[1:]
				if w := s.writes[string(k)]; w != nil {
					goOn, err = emit(k, w)
				}
			} else {
				goOn, err = emit(k, v)
			}
		}
		if err != nil {
			fnErr = err
		}
		if err != nil || !goOn {
			stopped = true
			return store.ErrStop
		}
		return nil
	})
	if err == nil && fnErr == nil && !stopped {
		_, fnErr = flush(nil)
	} else if stopped {
		// Only what lies up to the last key given to fn mattered.
		obs.bound = bytes.Clone(last)
		obs.entries = slices.DeleteFunc(obs.entries, func(e keyValue) bool { return e.key > string(last) })
	}
	s.scans = append(s.scans, obs)
	if err != nil {
		return err
	}
	return fnErr
}

// ScanReverse gives fn, in descending order, what Scan would give it of
// the keys below before. It reads (and records for the check at commit)
// the whole prefix, as Scan does: correct, and as costly as the prefix.
// Nothing walks backwards in an optimistic run (ListLogs reads in a
// view), so the simple way serves.
func (s *snapshotTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	var all []keyValue
	err := s.Scan(prefix, nil, 0, func(k, v []byte) error {
		if before != nil && bytes.Compare(k, before) >= 0 {
			return store.ErrStop
		}
		all = append(all, keyValue{key: string(k), value: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	for i, n := len(all)-1, 0; i >= 0 && (limit <= 0 || n < limit); i, n = i-1, n+1 {
		if err := fn([]byte(all[i].key), all[i].value); err != nil {
			if errors.Is(err, store.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// overlayKeys returns the overlay's keys under prefix after `after`, in
// order.
func (s *snapshotTx) overlayKeys(prefix, after []byte) []string {
	var keys []string
	for k := range s.writes {
		if len(k) >= len(prefix) && k[:len(prefix)] == string(prefix) && (after == nil || k > string(after)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// stillReads reports whether tx answers every read of the first run as the
// snapshot did.
func (s *snapshotTx) stillReads(tx store.Tx) (bool, error) {
	for _, g := range s.gets {
		v, err := tx.Get(g.key)
		if err != nil {
			return false, err
		}
		if (v == nil) != (g.value == nil) || !bytes.Equal(v, g.value) {
			return false, nil
		}
	}
	for _, sc := range s.scans {
		same, err := sc.stillReads(tx)
		if err != nil || !same {
			return false, err
		}
	}
	for _, same := range s.checks {
		if !same() {
			return false, nil
		}
	}
	return true, nil
}

func (sc *observedScan) stillReads(tx store.Tx) (bool, error) {
	i, same := 0, true
	err := tx.Scan(sc.prefix, sc.after, 0, func(k, v []byte) error {
		if sc.bound != nil && string(k) > string(sc.bound) {
			return store.ErrStop
		}
		if i == len(sc.entries) || sc.entries[i].key != string(k) || !bytes.Equal(sc.entries[i].value, v) {
			same = false
			return store.ErrStop
		}
		i++
		return nil
	})
	return same && i == len(sc.entries), err
}

// apply writes the overlay to tx, in key order.
func (s *snapshotTx) apply(tx store.Tx) error {
	for _, k := range slices.Sorted(maps.Keys(s.writes)) {
		var err error
		if v := s.writes[k]; v != nil {
			err = tx.Put([]byte(k), v)
		} else {
			err = tx.Delete([]byte(k))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// FirstRun reports whether t is an optimistic first run (ViewSnapshot),
// whose writes are kept aside and may be applied, or appended, later.
func (t *Tx) FirstRun() bool { return t.snap != nil }
