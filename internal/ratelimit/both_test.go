package ratelimit

import (
	"sync"
	"testing"
	"time"
)

// TestTakeBoth: a Take from both sets takes from each, or from neither
// when either refuses, and names the set that refused; a nil set is no
// limit.
func TestTakeBoth(t *testing.T) {
	key, tenant := NewSet(3, 1), NewSet(1, 1)
	if refused, _ := TakeBoth(key, "k", tenant, "t", t0); refused != nil {
		t.Fatalf("first TakeBoth refused by %p", refused)
	}
	// The tenant's bucket is empty: the key's must not be charged.
	for range 5 {
		if refused, wait := TakeBoth(key, "k", tenant, "t", t0); refused != tenant || wait != time.Second {
			t.Fatalf("TakeBoth past the tenant's burst = %p, %v; want the tenant's set (%p), 1s", refused, wait, tenant)
		}
	}
	for i := range 2 {
		if ok, _ := key.Take("k", t0); !ok {
			t.Errorf("key Take %d refused: a refused TakeBoth charged the key", i)
		}
	}
	// Now the key's bucket is empty: the tenant's, refilled, stays full.
	later := t0.Add(time.Second)
	key.Take("k", later)
	key.Take("k", later)
	key.Take("k", later)
	if refused, wait := TakeBoth(key, "k", tenant, "t", later); refused != key || wait != time.Second/3+1 {
		t.Errorf("TakeBoth past the key's burst = %p, %v; want the key's set (%p), %v", refused, wait, key, time.Second/3+1)
	}
	if ok, _ := tenant.Take("t", later); !ok {
		t.Error("tenant Take refused: a TakeBoth refused by the key charged the tenant")
	}
	for _, tc := range []struct {
		name string
		a, b *Set
	}{{"first nil", nil, NewSet(1, 1)}, {"second nil", NewSet(1, 1), nil}, {"both nil", nil, nil}} {
		if refused, _ := TakeBoth(tc.a, "x", tc.b, "y", t0); refused != nil {
			t.Errorf("%s: first TakeBoth refused", tc.name)
		}
		// Burst one: a second TakeBoth is refused unless both are nil.
		wantRefused := tc.a != nil || tc.b != nil
		if refused, _ := TakeBoth(tc.a, "x", tc.b, "y", t0); (refused != nil) != wantRefused {
			t.Errorf("%s: second TakeBoth refused by %p, want refused %v", tc.name, refused, wantRefused)
		}
	}
}

// TestTakeBothConcurrent: concurrent calls, some charging both sets and
// some only one, admit no more than either burst.
func TestTakeBothConcurrent(t *testing.T) {
	t.Parallel()
	key, tenant := NewSet(30, 1), NewSet(20, 1)
	var mu sync.Mutex
	both, keyOnly := 0, 0
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for range 10 {
				if g%2 == 0 {
					if refused, _ := TakeBoth(key, "k", tenant, "t", t0); refused == nil {
						mu.Lock()
						both++
						mu.Unlock()
					}
				} else if ok, _ := key.Take("k", t0); ok {
					mu.Lock()
					keyOnly++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if both > 20 || both+keyOnly != 30 {
		t.Errorf("%d admitted by both sets and %d by the key's alone; want at most 20 and 30 in all", both, keyOnly)
	}
}
