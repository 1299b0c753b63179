package bolt

import (
	"bytes"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/precommit"
)

var errTxDone = errors.New("bolt: transaction used after it ended")

// tx adapts a bbolt bucket to store.Tx. It is marked done when fn returns:
// bbolt's memory-mapped slices become invalid then, and touching a finished
// bbolt transaction can fault rather than fail.
type tx struct {
	b    *bbolt.Bucket
	done bool
	// path names the file in a *DamagedError; inFn is set while a Scan
	// runs its caller's function, whose panics are the caller's own.
	path string
	inFn bool
	// pre is what the function added to the writes done once per
	// transaction (store.PreCommit): moved to the Store's when the
	// function succeeds (Store.update).
	pre precommit.Parts
}

// AddPreCommit adds part to w's write, done once the last function of
// the bbolt transaction has returned (Store.preCommit).
func (t *tx) AddPreCommit(w store.PreCommitWrite, part any) error {
	if t.done {
		return errTxDone
	}
	if !t.b.Writable() {
		return fmt.Errorf("bolt: pre-commit: %w", berrors.ErrTxNotWritable)
	}
	t.pre.Add(w, part)
	return nil
}

// recoverDamage, deferred by each method with the inFn it was entered
// with, turns a panic of bbolt into a *DamagedError returned in *err
// (damage.go). A panic of the caller's function (inFn) is raised again.
func (t *tx) recoverDamage(err *error, outer bool) {
	p := recover()
	if p != nil && t.inFn {
		panic(p)
	}
	t.inFn = outer
	if p != nil {
		*err = damaged(t.path, p)
	}
}

// call runs the caller's function of a Scan.
func (t *tx) call(fn func(key, value []byte) error, k, v []byte) error {
	t.inFn = true
	err := fn(k, v)
	t.inFn = false
	return err
}

func (t *tx) finish() { t.done = true }

// Get copies the value out: bbolt's slices point into the memory map and are
// valid only while the transaction is open. It seeks with a cursor rather
// than calling Bucket.Get so that an empty value is told from a missing key
// by the key's presence, not by whether bbolt hands back a nil slice.
func (t *tx) Get(key []byte) (_ []byte, err error) {
	if t.done {
		return nil, errTxDone
	}
	defer t.recoverDamage(&err, t.inFn)
	t.inFn = false
	k, v := t.b.Cursor().Seek(key)
	if k == nil || !bytes.Equal(k, key) {
		return nil, nil
	}
	return append(make([]byte, 0, len(v)), v...), nil
}

// Put copies value, because bbolt keeps a reference to it until commit and the
// caller may reuse it. (bbolt copies the key itself.)
func (t *tx) Put(key, value []byte) (err error) {
	if t.done {
		return errTxDone
	}
	defer t.recoverDamage(&err, t.inFn)
	t.inFn = false
	if !t.b.Writable() {
		return fmt.Errorf("bolt: put: %w", berrors.ErrTxNotWritable)
	}
	if err := t.b.Put(key, append(make([]byte, 0, len(value)), value...)); err != nil {
		return fmt.Errorf("bolt: put: %w", err)
	}
	return nil
}

func (t *tx) Delete(key []byte) (err error) {
	if t.done {
		return errTxDone
	}
	defer t.recoverDamage(&err, t.inFn)
	t.inFn = false
	if err := t.b.Delete(key); err != nil {
		return fmt.Errorf("bolt: delete: %w", err)
	}
	return nil
}

// Scan seeks once and walks the cursor. The slices passed to fn are bbolt's
// own, valid until the transaction ends, which satisfies the contract.
func (t *tx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) (err error) {
	if t.done {
		return errTxDone
	}
	defer t.recoverDamage(&err, t.inFn)
	t.inFn = false
	c := t.b.Cursor()
	var k, v []byte
	if after != nil && bytes.Compare(after, prefix) >= 0 {
		k, v = c.Seek(after)
		if k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
	} else {
		k, v = c.Seek(prefix)
	}
	for n := 0; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if limit > 0 && n >= limit {
			break
		}
		n++
		if err := t.call(fn, k, v); err != nil {
			if errors.Is(err, store.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ScanReverse seeks to the first key at or past the range's end (the
// lesser of before and the prefix's successor) and walks the cursor back.
func (t *tx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) (err error) {
	if t.done {
		return errTxDone
	}
	defer t.recoverDamage(&err, t.inFn)
	t.inFn = false
	end, bounded := prefixEnd(prefix)
	if before != nil && (!bounded || bytes.Compare(before, end) < 0) {
		end, bounded = before, true
	}
	c := t.b.Cursor()
	var k, v []byte
	if bounded {
		if k, _ = c.Seek(end); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	} else {
		k, v = c.Last()
	}
	for n := 0; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if limit > 0 && n >= limit {
			break
		}
		n++
		if err := t.call(fn, k, v); err != nil {
			if errors.Is(err, store.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// prefixEnd returns the first key after every key beginning with prefix,
// or false when there is none (prefix is empty or all 0xff bytes).
func prefixEnd(prefix []byte) ([]byte, bool) {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := bytes.Clone(prefix[:i+1])
			end[i]++
			return end, true
		}
	}
	return nil, false
}
