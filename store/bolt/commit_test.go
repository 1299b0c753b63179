package bolt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestOnCommit: every committed Update is reported exactly once, in the
// commit that carried it; concurrent Updates share commits (a batch),
// failed ones (rolled back, alone or in a batch rerun) are not reported,
// and the store's conformance holds with the hook set.
func TestOnCommit(t *testing.T) {
	var mu sync.Mutex
	var commits, updates int
	var longest time.Duration
	s := openTemp(t, &Options{NoSync: true, OnCommit: func(n int, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		commits++
		updates += n
		longest = max(longest, d)
	}})
	defer s.Close()
	ctx := context.Background()
	const writers, each = 16, 20
	var wg sync.WaitGroup
	errFail := errors.New("fail")
	failed := 0
	var failedMu sync.Mutex
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := s.Update(ctx, func(tx store.Tx) error {
					if err := tx.Put(fmt.Appendf(nil, "k/%d/%d", w, i), []byte("v")); err != nil {
						return err
					}
					if i%5 == 4 {
						return errFail // rolled back: never reported
					}
					return nil
				})
				if errors.Is(err, errFail) {
					failedMu.Lock()
					failed++
					failedMu.Unlock()
				} else if err != nil {
					t.Errorf("Update: %v", err)
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if want := writers*each - failed; updates != want {
		t.Errorf("updates reported = %d, want %d (the committed Updates)", updates, want)
	}
	if commits == 0 || commits > updates {
		t.Errorf("%d commits for %d updates", commits, updates)
	}
	if commits == updates {
		t.Logf("no batch formed (%d commits): the machine ran the writers one by one", commits)
	}
	if longest <= 0 || longest > 10*time.Second {
		t.Errorf("longest commit %v", longest)
	}
}

func TestConformanceOnCommit(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTemp(t, &Options{NoSync: true, OnCommit: func(int, time.Duration) {}})
	})
}
