package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// sumWrite is a store.PreCommitWrite that writes the sum of its parts
// (ints) at a key of its own, pc/<n>, n unique for every call: the sum
// of every pc/ row is then how many parts committed, whichever
// transactions carried them. A part of -1 makes the write fail.
type sumWrite struct{ calls atomic.Int64 }

var errPartRefused = errors.New("storetest: pre-commit part refused")

func (w *sumWrite) WritePreCommit(tx store.Tx, parts []any) error {
	n := w.calls.Add(1)
	sum := 0
	for _, p := range parts {
		v := p.(int)
		if v < 0 {
			return errPartRefused
		}
		sum += v
	}
	return tx.Put(fmt.Appendf(nil, "pc/%08d", n), strconv.AppendInt(nil, int64(sum), 10))
}

// addPart adds part to w's write in tx, which must be a store.PreCommit.
func addPart(tx store.Tx, w *sumWrite, part int) error {
	pc, ok := tx.(store.PreCommit)
	if !ok {
		return fmt.Errorf("%T is not a store.PreCommit", tx)
	}
	return pc.AddPreCommit(w, part)
}

// preCommitStore skips t when the store's write transactions do not
// take parts of writes done once per transaction (an optional interface).
func preCommitStore(t *testing.T, su *suite) store.Store {
	t.Helper()
	s := su.fresh(t)
	ok := false
	update(t, s, func(tx store.Tx) error {
		_, ok = tx.(store.PreCommit)
		return nil
	})
	if !ok {
		t.Skip("the store's write transactions do not implement store.PreCommit")
	}
	return s
}

// pcSum is the sum of the pc/ rows and how many there are.
func pcSum(t *testing.T, s store.Store) (sum, rows int) {
	t.Helper()
	for _, e := range dump(t, s) {
		if len(e.K) > 3 && e.K[:3] == "pc/" {
			n, err := strconv.Atoi(e.V)
			if err != nil {
				t.Fatalf("%s = %q, not a number", e.K, e.V)
			}
			sum += n
			rows++
		}
	}
	return sum, rows
}

// testPreCommitAlone: an Update alone does the write once, at the end of
// its function, with every part in order; a View refuses parts; a
// function that fails writes nothing, its parts included; a write that
// fails fails its Update, and nothing of it is written.
func testPreCommitAlone(t *testing.T, su *suite) {
	s := preCommitStore(t, su)
	w := &sumWrite{}
	update(t, s, func(tx store.Tx) error {
		for _, p := range []int{1, 2, 3} {
			if err := addPart(tx, w, p); err != nil {
				return err
			}
		}
		return tx.Put([]byte("own"), []byte("x"))
	})
	if sum, rows := pcSum(t, s); sum != 6 || rows != 1 {
		t.Errorf("after one Update adding 1, 2, 3: pc/ rows sum to %d in %d rows, want 6 in 1", sum, rows)
	}

	err := s.View(t.Context(), func(tx store.Tx) error {
		if pc, ok := tx.(store.PreCommit); ok {
			return pc.AddPreCommit(w, 1)
		}
		return errors.New("not a PreCommit")
	})
	if err == nil {
		t.Errorf("AddPreCommit in a View = nil, want an error")
	}

	errFn := errors.New("fn failed")
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := addPart(tx, w, 10); err != nil {
			return err
		}
		return errFn
	})
	if !errors.Is(err, errFn) {
		t.Errorf("Update(failing fn) = %v, want %v", err, errFn)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Put([]byte("refused"), []byte("x")); err != nil {
			return err
		}
		return addPart(tx, w, -1)
	})
	if !errors.Is(err, errPartRefused) {
		t.Errorf("Update(part refused by the write) = %v, want %v", err, errPartRefused)
	}
	if v := Get(t, s, "refused"); v != nil {
		t.Errorf("Get(refused) = %q after its pre-commit write failed, want nil", v)
	}
	if sum, rows := pcSum(t, s); sum != 6 || rows != 1 {
		t.Errorf("after two failed Updates: pc/ rows sum to %d in %d rows, want 6 in 1", sum, rows)
	}
}

// testPreCommitConcurrent runs many Updates at once, so that a store
// with group commit shares transactions between them. Each adds one
// part and writes a key of its own; one in seven fails after adding its
// part, one in eleven adds a part its write refuses (failing the shared
// write, so that every function runs again alone), one in thirteen
// panics, and every Update increments a shared counter (which makes
// PostgreSQL abort and retry whole transactions). Then the parts that
// committed are exactly the Updates that returned nil: none lost, none
// twice, and no more writes than successful Updates.
func testPreCommitConcurrent(t *testing.T, su *suite) {
	const writers, perWriter = 16, 25
	s := preCommitStore(t, su)
	w := &sumWrite{}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				n := g*perWriter + i
				err := func() (err error) {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panicked: %v", p)
						}
					}()
					return s.Update(t.Context(), func(tx store.Tx) error {
						c, err := readInt(tx, "counter")
						if err != nil {
							return err
						}
						if err := tx.Put([]byte("counter"), strconv.AppendInt(nil, c+1, 10)); err != nil {
							return err
						}
						if err := tx.Put(fmt.Appendf(nil, "own/%04d", n), []byte("x")); err != nil {
							return err
						}
						part := 1
						if n%11 == 5 {
							part = -1
						}
						if err := addPart(tx, w, part); err != nil {
							return err
						}
						switch {
						case n%7 == 3:
							return errFnFailed
						case n%13 == 4:
							panic("storetest: a function that panics")
						}
						return nil
					})
				}()
				wantErr := n%7 == 3 || n%11 == 5 || n%13 == 4
				if (err != nil) != wantErr {
					t.Errorf("Update %d = %v, want an error: %v", n, err, wantErr)
				}
				if err == nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	sum, rows := pcSum(t, s)
	owns := 0
	var counter int64
	view(t, s, func(tx store.Tx) error {
		owns = len(scanKeys(t, tx, []byte("own/"), nil, 0))
		var err error
		counter, err = readInt(tx, "counter")
		return err
	})
	if int64(sum) != ok.Load() || int64(owns) != ok.Load() || counter != ok.Load() {
		t.Errorf("%d Updates succeeded; pc/ rows sum to %d, %d own/ keys, counter %d: want all %d", ok.Load(), sum, owns, counter, ok.Load())
	}
	if int64(rows) > ok.Load() {
		t.Errorf("%d pc/ rows for %d successful Updates: a write done more than once per transaction", rows, ok.Load())
	}
	t.Logf("%d successful Updates, %d pre-commit writes committed, %d called", ok.Load(), rows, w.calls.Load())
}

var errFnFailed = errors.New("storetest: fn failed")
