package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// testConcurrentWriters has every Update do a read-modify-write of one shared
// counter: any lost update shows up as a short count, so this checks that
// writers are isolated from each other. Run it under -race.
func testConcurrentWriters(t *testing.T, su *suite) {
	const writers, perWriter = 16, 50
	s := su.fresh(t)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					n, err := readInt(tx, "counter")
					if err != nil {
						return err
					}
					if err := tx.Put([]byte("counter"), strconv.AppendInt(nil, n+1, 10)); err != nil {
						return err
					}
					return tx.Put(fmt.Appendf(nil, "w/%02d/%03d", w, i), []byte("x"))
				})
				if err != nil {
					t.Errorf("writer %d: Update %d = %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()

	view(t, s, func(tx store.Tx) error {
		n, err := readInt(tx, "counter")
		if err != nil {
			return err
		}
		if n != writers*perWriter {
			t.Errorf("counter = %d, want %d", n, writers*perWriter)
		}
		if got := len(scanKeys(t, tx, []byte("w/"), nil, 0)); got != writers*perWriter {
			t.Errorf("Scan(w/) found %d keys, want %d", got, writers*perWriter)
		}
		return nil
	})
}

// testConcurrentReadersWriters moves amounts between accounts while readers
// check that the total never changes, with Get and with Scan. Every fifth
// Update fails after moving money, so a rollback that leaks, or a reader that
// sees uncommitted writes, breaks the invariant. Writers also insert new keys
// so that a backend keeping an index must update it while readers run.
func testConcurrentReadersWriters(t *testing.T, su *suite) {
	const (
		accounts  = 10
		initial   = 100
		writers   = 8
		perWriter = 50
		readers   = 8
	)
	s := su.fresh(t)
	var pairs []kv
	for i := range accounts {
		pairs = append(pairs, kv{acct(i), strconv.Itoa(initial)})
	}
	seed(t, s, pairs...)

	var done atomic.Bool
	var writersWG, readersWG sync.WaitGroup
	for r := range readers {
		readersWG.Go(func() {
			for reads := 0; reads < 3 || !done.Load(); reads++ {
				if err := s.View(t.Context(), checkTotal(accounts, accounts*initial)); err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				// Spinning readers would otherwise hog the Ps, leaving
				// runnable writers to wait for preemption (10ms each).
				runtime.Gosched()
			}
		})
	}
	for w := range writers {
		writersWG.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWriter {
				from, to, amount := rng.IntN(accounts), rng.IntN(accounts), rng.IntN(50)
				fail := i%5 == 4
				err := s.Update(t.Context(), func(tx store.Tx) error {
					if err := transfer(tx, acct(from), acct(to), amount); err != nil {
						return err
					}
					if err := tx.Put(fmt.Appendf(nil, "log/%02d/%03d", w, i), []byte("x")); err != nil {
						return err
					}
					if fail {
						return errSentinel
					}
					return nil
				})
				if fail && !errors.Is(err, errSentinel) {
					t.Errorf("writer %d: failing Update %d = %v, want %v", w, i, err, errSentinel)
				} else if !fail && err != nil {
					t.Errorf("writer %d: Update %d = %v", w, i, err)
				}
			}
		})
	}
	writersWG.Wait()
	done.Store(true)
	readersWG.Wait()

	view(t, s, func(tx store.Tx) error {
		if err := checkTotal(accounts, accounts*initial)(tx); err != nil {
			t.Error(err)
		}
		want := writers * (perWriter - perWriter/5)
		if got := len(scanKeys(t, tx, []byte("log/"), nil, 0)); got != want {
			t.Errorf("Scan(log/) found %d keys, want %d (failed Updates must leave none)", got, want)
		}
		return nil
	})
}

func acct(i int) string { return fmt.Sprintf("acct/%02d", i) }

func transfer(tx store.Tx, from, to string, amount int) error {
	a, err := readInt(tx, from)
	if err != nil {
		return err
	}
	if err := tx.Put([]byte(from), strconv.AppendInt(nil, a-int64(amount), 10)); err != nil {
		return err
	}
	// Read after write: when from == to this sees the debit.
	b, err := readInt(tx, to)
	if err != nil {
		return err
	}
	return tx.Put([]byte(to), strconv.AppendInt(nil, b+int64(amount), 10))
}

// checkTotal returns a View fn that checks the sum of all accounts, read both
// by Get and by Scan.
func checkTotal(accounts int, want int64) func(store.Tx) error {
	return func(tx store.Tx) error {
		var byGet int64
		for i := range accounts {
			n, err := readInt(tx, acct(i))
			if err != nil {
				return err
			}
			byGet += n
		}
		var byScan int64
		seen := 0
		err := tx.Scan([]byte("acct/"), nil, 0, func(k, v []byte) error {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("account %q = %q: %w", k, v, err)
			}
			byScan += n
			seen++
			return nil
		})
		if err != nil {
			return err
		}
		if byGet != want || byScan != want || seen != accounts {
			return fmt.Errorf("total by Get = %d, by Scan = %d over %d accounts; want %d over %d",
				byGet, byScan, seen, want, accounts)
		}
		return nil
	}
}

// readInt reads a decimal counter; a missing key is 0.
func readInt(tx store.Tx, key string) (int64, error) {
	v, err := tx.Get([]byte(key))
	if err != nil || v == nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s = %q: %w", key, v, err)
	}
	return n, nil
}

// testConcurrentFailures runs many Updates at once, so that a backend that
// shares transactions between concurrent Updates puts failing ones in the
// same transaction as others: some return an error, some panic, some have a
// cancelled context, some fail after reading their own writes. Each of
// those fails only its own caller, with its own error or panic, and writes
// nothing; every other Update commits.
func testConcurrentFailures(t *testing.T, su *suite) {
	const n = 200
	s := su.fresh(t)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	type outcome struct {
		err      error
		panicked any
	}
	outcomes := make([]outcome, n)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					outcomes[i].panicked = p
				}
			}()
			start.Wait()
			ctx := t.Context()
			if i%6 == 3 {
				ctx = cancelled
			}
			outcomes[i].err = s.Update(ctx, func(tx store.Tx) error {
				key := fmt.Appendf(nil, "k/%03d", i)
				if err := tx.Put(key, []byte("v")); err != nil {
					return err
				}
				switch i % 6 {
				case 1:
					return errSentinel
				case 2:
					panic(fmt.Sprintf("panic %d", i))
				case 4:
					// Read its own write (a backend may send it to
					// the database first), then fail.
					if _, err := tx.Get(key); err != nil {
						return err
					}
					return errSentinel
				case 5:
					if v, err := tx.Get(key); err != nil || string(v) != "v" {
						return fmt.Errorf("Get(%s) = %q, %v; want v", key, v, err)
					}
				}
				return nil
			})
		})
	}
	start.Done()
	wg.Wait()

	view(t, s, func(tx store.Tx) error {
		for i := range n {
			o := outcomes[i]
			v, err := tx.Get(fmt.Appendf(nil, "k/%03d", i))
			if err != nil {
				return err
			}
			switch i % 6 {
			case 0, 5:
				if o.err != nil || o.panicked != nil || v == nil {
					t.Errorf("Update %d = %v (panic %v), stored %q; want nil and a value", i, o.err, o.panicked, v)
				}
			case 1, 4:
				if !errors.Is(o.err, errSentinel) || v != nil {
					t.Errorf("failing Update %d = %v, stored %q; want %v and nothing", i, o.err, v, errSentinel)
				}
			case 2:
				if want := fmt.Sprintf("panic %d", i); o.panicked != want || v != nil {
					t.Errorf("panicking Update %d panicked with %v, stored %q; want %q and nothing", i, o.panicked, v, want)
				}
			case 3:
				if !errors.Is(o.err, context.Canceled) || v != nil {
					t.Errorf("cancelled Update %d = %v, stored %q; want %v and nothing", i, o.err, v, context.Canceled)
				}
			}
		}
		return nil
	})
}
