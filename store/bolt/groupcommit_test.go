package bolt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// TestGroupCommitIsolatesFailures runs many concurrent Updates, so that
// they share transactions, where some fail, some panic and some have a
// cancelled context: each of those fails only its own caller (with its own
// error or panic) and writes nothing, and every other Update is committed.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	errOwn := errors.New("this update fails")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	const n = 400
	type outcome struct {
		err      error
		panicked any
	}
	outcomes := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					outcomes[i].panicked = p
				}
			}()
			ctx := context.Background()
			if i%7 == 3 {
				ctx = cancelled
			}
			outcomes[i].err = s.updateShared(ctx, func(tx store.Tx) error {
				if err := tx.Put(fmt.Appendf(nil, "k/%03d", i), []byte("v")); err != nil {
					return err
				}
				switch i % 7 {
				case 1:
					return errOwn
				case 2:
					panic(fmt.Sprintf("panic %d", i))
				}
				return nil
			})
		})
	}
	wg.Wait()

	err := s.View(context.Background(), func(tx store.Tx) error {
		for i := range n {
			v, err := tx.Get(fmt.Appendf(nil, "k/%03d", i))
			if err != nil {
				return err
			}
			o := outcomes[i]
			switch i % 7 {
			case 1:
				if !errors.Is(o.err, errOwn) || v != nil {
					t.Errorf("update %d: err %v, value %q; want its own error and nothing written", i, o.err, v)
				}
			case 2:
				if o.panicked != fmt.Sprintf("panic %d", i) || v != nil {
					t.Errorf("update %d: panic %v, value %q; want its own panic and nothing written", i, o.panicked, v)
				}
			case 3:
				if !errors.Is(o.err, context.Canceled) || v != nil {
					t.Errorf("update %d: err %v, value %q; want context.Canceled and nothing written", i, o.err, v)
				}
			default:
				if o.err != nil || o.panicked != nil || string(v) != "v" {
					t.Errorf("update %d: err %v, panic %v, value %q; want it committed", i, o.err, o.panicked, v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommitShares: concurrent Updates are carried by fewer
// transactions than there are Updates.
func TestGroupCommitShares(t *testing.T) {
	var mu sync.Mutex
	commits, updates := 0, 0
	s := openTemp(t, &Options{NoSync: true, OnCommit: func(n int, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		commits++
		updates += n
	}})
	defer s.Close()
	const n = 500
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := s.updateShared(context.Background(), func(tx store.Tx) error {
				return tx.Put(fmt.Appendf(nil, "k/%03d", i), []byte("v"))
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if updates != n || commits >= n {
		t.Errorf("%d updates in %d commits; want all %d, in fewer commits", updates, commits, n)
	}
}
