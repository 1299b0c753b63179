package bolt

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"go.etcd.io/bbolt"
)

// A damaged file.
//
// bbolt trusts its file: a page overwritten on disk (a bad block, a stray
// write, a copy cut short) makes it panic ("slice bounds out of range",
// "invalid freelist page", "page expected to be ...") or fault on an
// address past its memory map, and either would end the process with a
// stack trace. So every call into bbolt runs with debug.SetPanicOnFault
// (a fault becomes a panic) and under a recover that turns bbolt's panic
// into a *DamagedError naming the file: Open refuses the file, and a
// transaction that meets a damaged page later fails with the error, rolled
// back, while the process keeps running. A panic of the caller's own
// function is not bbolt's and propagates as before.
//
// Open also checks the file before it serves: the length its header names
// (a mapped file cut short faults past its end) and the kind of the
// freelist and root pages it names, and, up to
// checkAtOpenMax bytes, bbolt's whole consistency check (Tx.Check, which
// reads every page: 376 MB in 0.13-0.16 s from the page cache, measured
// with random 40-byte keys and 600-byte values, so about a second per 3 GB
// read from a fast disk). A bigger file gets the quick check only (its
// meta and freelist pages, which bbolt reads at open, and the paths to
// its first and last keys), and damage deeper in it is found by the
// transaction that reads it.

// checkAtOpenMax is the largest file whose pages Open checks all of.
const checkAtOpenMax = 1 << 30

// ErrDamaged is wrapped by the errors of a store whose file is damaged:
// errors.Is(err, ErrDamaged) holds for a *DamagedError.
var ErrDamaged = errors.New("the database file is damaged")

// DamagedError says that the bbolt file at Path is damaged: bbolt refused
// a page of it (Err says how). Nothing was written by the operation that
// met it. The file cannot be repaired in place; restore it from a backup.
type DamagedError struct {
	Path string
	Err  error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("bolt: the database file %s is damaged: %v", e.Path, e.Err)
}

// Unwrap lets errors.Is find ErrDamaged and the cause.
func (e *DamagedError) Unwrap() []error { return []error{ErrDamaged, e.Err} }

// damaged is the DamagedError for a panic value p of bbolt.
func damaged(path string, p any) error {
	if err, ok := p.(error); ok {
		return &DamagedError{Path: path, Err: err}
	}
	return &DamagedError{Path: path, Err: fmt.Errorf("%v", p)}
}

// guard runs fn, which calls into bbolt, on this goroutine with faults
// turned into panics, and returns a panic of bbolt as a *DamagedError. A
// panic raised while *own is true is the caller's own function's and is
// raised again.
func guard(path string, own *bool, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if own != nil && *own {
				panic(p)
			}
			err = damaged(path, p)
		}
	}()
	return fn()
}

// checkOpen checks db, just opened from path, before it serves (see
// above): the whole file with bbolt's Tx.Check when it is at most
// checkAtOpenMax bytes, else the paths to its first and last keys.
func checkOpen(db *bbolt.DB, path string) error {
	return guard(path, nil, func() error {
		return db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketName)
			if b != nil && tx.Size() <= checkAtOpenMax {
				// Every key and value first: a page that does not
				// hold what its parent says panics here, and guard
				// names it. Then the structure (the freelist against
				// the pages in use), which this walk does not see.
				c := b.Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
				}
			}
			if tx.Size() <= checkAtOpenMax {
				var errs []error
				for err := range tx.Check() {
					errs = append(errs, checkError(err))
					if len(errs) == 10 {
						break
					}
				}
				if len(errs) > 0 {
					return &DamagedError{Path: path, Err: errors.Join(errs...)}
				}
			}
			if b != nil {
				c := b.Cursor()
				c.First()
				c.Last()
			}
			return nil
		})
	})
}

// openBolt is bbolt.Open with the file's header checked first and a
// panic of bbolt's (its meta or freelist page damaged) returned as a
// *DamagedError. bbolt leaves the file open and locked when it panics:
// the process that gets the error should not retry the file.
func openBolt(path string, o *bbolt.Options) (db *bbolt.DB, err error) {
	if fi, statErr := os.Stat(path); statErr == nil && fi.Size() > 0 {
		if err := checkHeader(path); err != nil {
			return nil, &DamagedError{Path: path, Err: err}
		}
	}
	err = guard(path, nil, func() error {
		var err error
		db, err = bbolt.Open(path, 0o600, o)
		return err
	})
	return db, err
}

// bucketOf is btx's bucket. Finding it reads pages, so on a damaged file
// bbolt panics there: that panic is returned as a *DamagedError, not
// taken for one of the caller's function, which runs after it.
func bucketOf(btx *bbolt.Tx, path string) (b *bbolt.Bucket, err error) {
	err = guard(path, nil, func() error {
		b = btx.Bucket(bucketName)
		return nil
	})
	return b, err
}

// checkError is an error of bbolt's consistency check as this package
// reports it. The check stops at a page it cannot read with an error
// that bbolt words "panic: <reason>" (it recovered its own assertion):
// the file is damaged there, and no process crashed, so the report says
// that instead.
func checkError(err error) error {
	if reason, ok := strings.CutPrefix(err.Error(), "panic: "); ok {
		return fmt.Errorf("the check stopped at an unreadable page: %s", reason)
	}
	return err
}
