package memory

import (
	"errors"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/precommit"
)

var (
	errReadOnly   = errors.New("memory: write in a read-only transaction")
	errTxDone     = errors.New("memory: transaction used after it ended")
	errEmptyKey   = errors.New("memory: empty key")
	errScanWriter = errors.New("memory: write during Scan callback")
)

// tx is a transaction on a Store. The Store's lock is held for its lifetime.
type tx struct {
	s        *Store
	writable bool
	done     bool
	scanning int // nesting depth of Scan calls in progress

	// undo records, in order, the state of each key before every write, so
	// rollback can replay it backwards. Repeated writes to one key simply
	// produce several entries; replaying in reverse ends at the oldest.
	undo []undoEntry
	// pre is what the Update's function added to the writes done once
	// per transaction (store.PreCommit), written when it returns nil.
	pre precommit.Parts
}

type undoEntry struct {
	key     string
	prev    []byte // never mutated: Put stores fresh copies
	existed bool
}

func (t *tx) finish() { t.done = true }

func (t *tx) checkWrite() error {
	switch {
	case t.done:
		return errTxDone
	case !t.writable:
		return errReadOnly
	case t.scanning > 0:
		// The contract forbids it; failing loudly keeps callers honest
		// on backends (such as bbolt) where it would corrupt the cursor.
		return errScanWriter
	}
	return nil
}

// AddPreCommit adds part to w's write, done when the Update's function
// has returned nil (the store has no group commit).
func (t *tx) AddPreCommit(w store.PreCommitWrite, part any) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	t.pre.Add(w, part)
	return nil
}

// rollback undoes every write of the transaction. It runs with the write lock
// held.
func (t *tx) rollback() {
	if len(t.undo) == 0 {
		return
	}
	m := t.s.m
	for i := len(t.undo) - 1; i >= 0; i-- {
		u := t.undo[i]
		if u.existed {
			m[u.key] = u.prev
		} else {
			delete(m, u.key)
		}
	}
	// The key set may have changed; a rollback is rare, so do not bother
	// working out whether it did.
	t.s.dirty = true
	t.undo = nil
}

// Get returns a copy of the stored value. An existing key with an empty value
// yields a non-nil empty slice, so callers can tell it from a missing key.
func (t *tx) Get(key []byte) ([]byte, error) {
	if t.done {
		return nil, errTxDone
	}
	v, ok := t.s.m[string(key)]
	if !ok {
		return nil, nil
	}
	return append(make([]byte, 0, len(v)), v...), nil
}

// Put stores copies of key and value. Empty keys are rejected, as bbolt
// rejects them, so code tested against this store also runs on bolt.
func (t *tx) Put(key, value []byte) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	if len(key) == 0 {
		return errEmptyKey
	}
	k := string(key)
	prev, existed := t.s.m[k]
	t.undo = append(t.undo, undoEntry{key: k, prev: prev, existed: existed})
	t.s.m[k] = append(make([]byte, 0, len(value)), value...)
	if !existed {
		t.s.added = append(t.s.added, k)
	}
	return nil
}

// Delete removes key; a missing key is a no-op.
func (t *tx) Delete(key []byte) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	k := string(key)
	prev, existed := t.s.m[k]
	if !existed {
		return nil
	}
	t.undo = append(t.undo, undoEntry{key: k, prev: prev, existed: true})
	delete(t.s.m, k)
	t.s.removed = true
	return nil
}

// Scan walks the sorted key index from a binary-searched start. The key and
// value handed to fn live in one scratch buffer reused for every call: that is
// cheap, and it makes a caller that keeps them without copying fail in tests
// here rather than only on another backend.
func (t *tx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	if t.done {
		return errTxDone
	}
	keys := t.s.sortedKeys()
	p := string(prefix)
	start := p
	inclusive := true
	if after != nil && string(after) >= p {
		start, inclusive = string(after), false
	}
	i, found := slices.BinarySearch(keys, start)
	if found && !inclusive {
		i++
	}

	t.scanning++
	defer func() { t.scanning-- }()
	var buf []byte
	for n := 0; i < len(keys); i++ {
		k := keys[i]
		if !strings.HasPrefix(k, p) {
			break
		}
		if limit > 0 && n >= limit {
			break
		}
		v, ok := t.s.m[k]
		if !ok {
			continue // unreachable while fn cannot write; cheap to guard
		}
		n++
		buf = append(append(buf[:0], k...), v...)
		err := fn(buf[:len(k):len(k)], buf[len(k):])
		if err != nil {
			if errors.Is(err, store.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ScanReverse walks the sorted key index downwards from the last key
// below both before and the prefix's end, with the same scratch buffer as
// Scan.
func (t *tx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	if t.done {
		return errTxDone
	}
	keys := t.s.sortedKeys()
	p := string(prefix)
	hi := len(keys) // keys[hi:] are past the range
	if end, ok := prefixEnd(p); ok {
		hi, _ = slices.BinarySearch(keys, end)
	}
	if before != nil {
		if b, _ := slices.BinarySearch(keys, string(before)); b < hi {
			hi = b
		}
	}

	t.scanning++
	defer func() { t.scanning-- }()
	var buf []byte
	for n, i := 0, hi-1; i >= 0; i-- {
		k := keys[i]
		if !strings.HasPrefix(k, p) {
			break
		}
		if limit > 0 && n >= limit {
			break
		}
		v, ok := t.s.m[k]
		if !ok {
			continue
		}
		n++
		buf = append(append(buf[:0], k...), v...)
		err := fn(buf[:len(k):len(k)], buf[len(k):])
		if err != nil {
			if errors.Is(err, store.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// prefixEnd returns the first key after every key beginning with p, or
// false when there is none (p is empty or all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			return p[:i] + string([]byte{p[i] + 1}), true
		}
	}
	return "", false
}
