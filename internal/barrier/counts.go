package barrier

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
)

// Kept counts, as delta rows (see "Kept counts" in doc.go).
//
// A count at key k is the sum of its base row, at k, and of its delta
// rows, at k/+/<instance>/<stamp>: <instance> is the id of the Vault that
// wrote it (Config.Instance), <stamp> 32 hex digits, the writer's clock in
// nanoseconds (TimeKey) then a sequence number of the barrier, so that no
// two store transactions ever write the same delta row. Every value is a
// count record (Config.Counts), sealed like any other value at its key.
// A commit writes its count changes as delta rows and reads no count;
// the folder (counts_fold.go) moves delta rows into the base row later.

// deltaSep separates a count's key from the part of a delta row's key
// that names it.
const deltaSep = "/+/"

// countRecord counts a record of a counted kind (CountedKinds) that
// SealPut writes (delta 1) or Delete removes (-1), when that changes
// whether it exists: one more read, for records that are written seldom.
func (t *Tx) countRecord(key Key, delta int64) error {
	if key.counted == "" {
		return nil
	}
	raw, err := t.tx.Get([]byte(key.s))
	if err != nil {
		return err
	}
	if (raw == nil) == (delta > 0) {
		t.AddCount(Tenant(key.tenant).Count(key.counted), delta)
	}
	return nil
}

// countDelta is a change to one count, written when the transaction
// commits (FlushCounts).
type countDelta struct {
	key Key
	d   int64
}

// AddCount changes the count at k by d when t commits. Nothing is read:
// the change is written as a delta row when t's store transaction
// commits (FlushCounts), once for every function sharing it, so that a
// batch of many tokens, and a group commit of many calls, writes one row
// per count it changes, and an optimistic first run reads no count.
func (t *Tx) AddCount(k Key, d int64) {
	if t.counts == nil {
		t.counts = map[string]*countDelta{}
	}
	if c := t.counts[k.s]; c != nil {
		c.d += d
		return
	}
	t.counts[k.s] = &countDelta{key: k, d: d}
}

// countChange is one count's change in a countPart, with the keyring
// that seals its delta row (read in the function that made it).
type countChange struct {
	key  Key
	d    int64
	ring *seal.Keyring
}

// countPart is what one transaction function adds to its store
// transaction's count write (countWriter).
type countPart []countChange

// FlushCounts hands t's count changes to the write done once when its
// store transaction commits (store.PreCommit): it reads nothing, and
// writes nothing another transaction writes. On a store whose
// transactions do not take such parts (a wrapper of a store in tests),
// it writes t's delta rows itself. It keeps the changes: a store that
// runs the transaction function again runs it on a fresh transaction.
//
// It returns the store's error, or the Config.TenantGone error for a
// count of a tenant without a keyring.
func (t *Tx) FlushCounts() error {
	var part countPart
	for _, s := range slices.Sorted(maps.Keys(t.counts)) {
		c := t.counts[s]
		if c.d == 0 {
			continue
		}
		ring, err := t.ring(c.key)
		if err != nil {
			return err
		}
		part = append(part, countChange{c.key, c.d, ring})
	}
	if len(part) == 0 {
		return nil
	}
	if pc, ok := t.tx.(store.PreCommit); ok {
		return pc.AddPreCommit(t.b.deltas, part)
	}
	return t.b.deltas.WritePreCommit(t.tx, []any{part})
}

// countWriter writes the delta rows of a store transaction: the sum of
// each count's changes in every function that succeeded, one row per
// count, none for a sum of zero. It notes the counts it wrote for the
// folder.
type countWriter struct{ b *Barrier }

// WritePreCommit implements store.PreCommitWrite.
func (w *countWriter) WritePreCommit(tx store.Tx, parts []any) error {
	sums := map[string]*countChange{}
	for _, p := range parts {
		for _, c := range p.(countPart) {
			if s := sums[c.key.s]; s != nil {
				s.d += c.d
				continue
			}
			sums[c.key.s] = &countChange{c.key, c.d, c.ring}
		}
	}
	b := w.b
	for _, s := range slices.Sorted(maps.Keys(sums)) {
		c := sums[s]
		if c.d == 0 {
			continue
		}
		k := b.deltaKey(c.key)
		if err := tx.Put([]byte(k.s), c.ring.Seal([]byte(k.s), b.counts.EncodeCount(k, c.d))); err != nil {
			return err
		}
		b.fold.wrote(c.key)
	}
	return nil
}

// deltaKey is the key of a new delta row of the count at k, written by
// this barrier's instance: unique, as its sequence number is.
func (b *Barrier) deltaKey(k Key) Key {
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], b.deltaSeq.Add(1))
	s := k.s + deltaSep + b.instance + "/" + TimeKey(b.now()) + hex.EncodeToString(seq[:])
	return Key{s: s, tenant: k.tenant}
}

// deltaRow is a delta row as read: its key, the instance that wrote it,
// its stamp, and its raw (sealed) value.
type deltaRow struct {
	key      string
	instance string
	stamp    string
	raw      []byte
}

// countRows reads the base row of the count at k (nil when there is
// none) and its delta rows, in one scan.
func (t *Tx) countRows(k Key) (base []byte, rows []deltaRow, err error) {
	err = t.tx.Scan([]byte(k.s), nil, 0, func(key, v []byte) error {
		rest := string(key[len(k.s):])
		switch {
		case rest == "":
			base = bytes.Clone(v)
		case strings.HasPrefix(rest, deltaSep):
			inst, stamp, ok := strings.Cut(rest[len(deltaSep):], "/")
			if !ok {
				return fmt.Errorf("tokenvault: a delta row of %s has a malformed key", k)
			}
			rows = append(rows, deltaRow{string(key), inst, stamp, bytes.Clone(v)})
		}
		// Anything else is another count whose key begins with k's.
		return nil
	})
	return base, rows, err
}

// openCount decrypts and decodes the count record raw, stored at key.
func (t *Tx) openCount(key Key, raw []byte) (int64, error) {
	pt, err := t.Open(key, raw)
	if err != nil {
		return 0, err
	}
	n, err := t.b.counts.DecodeCount(key, pt)
	clear(pt)
	if err != nil {
		return 0, fmt.Errorf("tokenvault: decode %s: %w", key, err)
	}
	return n, nil
}

// sumRows is the sum of the delta rows of the count at k.
func (t *Tx) sumRows(k Key, rows []deltaRow) (int64, error) {
	var n int64
	for _, r := range rows {
		d, err := t.openCount(Key{s: r.key, tenant: k.tenant}, r.raw)
		if err != nil {
			return 0, err
		}
		n += d
	}
	return n, nil
}

// ReadCount reads a kept count (0 when there is none): its base row and
// its delta rows, in one scan of the count's keys. A count below zero
// (which only a damaged store holds) reads as zero.
func (t *Tx) ReadCount(k Key) (int, error) {
	base, rows, err := t.countRows(k)
	if err != nil {
		return 0, err
	}
	var n int64
	if base != nil {
		if n, err = t.openCount(k, base); err != nil {
			return 0, err
		}
	}
	d, err := t.sumRows(k, rows)
	if err != nil {
		return 0, err
	}
	return int(max(n+d, 0)), nil
}

// PutCount sets the count at k to n now: its base row, with its delta
// rows removed. For a count built by counting (when a store written
// before it is first opened), and for counters written by one
// transaction at a time.
func (t *Tx) PutCount(k Key, n int64) error {
	_, rows, err := t.countRows(k)
	if err != nil {
		return err
	}
	for _, r := range rows {
		t.rewrites++
		if err := t.tx.Delete([]byte(r.key)); err != nil {
			return err
		}
	}
	return t.SealPut(k, t.b.counts.EncodeCount(k, n))
}

// foldState is what the folder knows of this instance's delta rows: the
// counts it wrote rows of since they were last folded, and how many.
type foldState struct {
	mu    sync.Mutex
	dirty map[string]*dirtyCount
	// wake has a value when a count has foldAfterRows rows or more.
	wake chan struct{}
}

// dirtyCount is a count this instance wrote delta rows of.
type dirtyCount struct {
	key  Key
	rows int
}

// foldAfterRows is how many delta rows of one count an instance writes
// before the folder is woken: what a read of that count sums, beyond the
// rows written while a fold runs and one row per other live instance.
const foldAfterRows = 64

// wrote notes a delta row of the count at k. The transaction may yet
// roll back: folding a count that has no rows is only wasted work.
func (f *foldState) wrote(k Key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirty == nil {
		f.dirty = map[string]*dirtyCount{}
	}
	d := f.dirty[k.s]
	if d == nil {
		d = &dirtyCount{key: k}
		f.dirty[k.s] = d
	}
	d.rows++
	if d.rows == foldAfterRows {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// take removes and returns the counts noted so far.
func (f *foldState) take() []Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]Key, 0, len(f.dirty))
	for _, s := range slices.Sorted(maps.Keys(f.dirty)) {
		keys = append(keys, f.dirty[s].key)
	}
	f.dirty = nil
	return keys
}

// putBack notes keys again, after a fold of them failed.
func (f *foldState) putBack(keys []Key) {
	for _, k := range keys {
		f.wrote(k)
	}
}
