package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// take admits tenant without waiting (a deadline already passed): the
// release function, or nil when no worker may be taken now.
func take(t *testing.T, a *admission, tenant string) func() {
	t.Helper()
	release, err := a.admit(t.Context(), tenant, time.Now())
	if errors.Is(err, ErrBusy) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// fill admits tenant until it may take no more, and returns how many it got.
func fill(t *testing.T, a *admission, tenant string) int {
	n := 0
	for take(t, a, tenant) != nil {
		n++
	}
	return n
}

// TestReserveKeepsAWorkerForANewTenant: however the busy tenants arrived
// and however much each asks for, a tenant with nothing running gets a
// worker at once while at most workers − perTenant other tenants hold one.
// Before, two tenants at half the pool each took every worker.
func TestReserveKeepsAWorkerForANewTenant(t *testing.T) {
	for _, tc := range []struct{ workers, perTenant, busy int }{
		{16, 8, 1}, {16, 8, 2}, {16, 8, 3}, {16, 8, 8}, {6, 2, 3}, {10, 2, 8}, {16, 12, 4},
	} {
		t.Run(fmt.Sprintf("%d workers, %d per tenant, %d busy tenants", tc.workers, tc.perTenant, tc.busy), func(t *testing.T) {
			a := newAdmission(tc.workers, tc.perTenant)
			got := 0
			for i := range tc.busy {
				n := fill(t, a, fmt.Sprint("busy", i))
				if n < 1 || n > tc.perTenant {
					t.Fatalf("busy tenant %d got %d workers", i, n)
				}
				got += n
			}
			if tc.busy == 1 && got != tc.perTenant {
				t.Errorf("a tenant alone got %d workers, want its cap %d", got, tc.perTenant)
			}
			if take(t, a, "B") == nil {
				t.Fatalf("tenant B got no worker with %d busy tenants holding %d of %d", tc.busy, got, tc.workers)
			}
		})
	}
	// Past the bound, every worker may be taken: workers − perTenant + 1
	// busy tenants, the first holding perTenant.
	a := newAdmission(6, 2)
	for i := range 5 {
		fill(t, a, fmt.Sprint("busy", i))
	}
	if a.inUse() != 6 {
		t.Fatalf("in use = %d, want 6", a.inUse())
	}
}

// TestFewestRunningGoesFirst: a freed worker goes to the waiting tenant
// with the fewest invocations running, even one that came later.
func TestFewestRunningGoesFirst(t *testing.T) {
	a := newAdmission(4, 4)
	var releases []func()
	for range 4 {
		releases = append(releases, take(t, a, "A"))
	}
	order := make(chan string, 2)
	var waiters sync.WaitGroup // each waiter releases after it reports
	waiters.Add(2)
	wait := func(tenant string) {
		defer waiters.Done()
		release, err := a.admit(context.Background(), tenant, time.Now().Add(time.Minute))
		if err != nil {
			t.Error(err)
			return
		}
		order <- tenant
		release()
	}
	go wait("A")
	waitQueued(t, a, 1)
	go wait("B")
	waitQueued(t, a, 2)
	releases[0]()
	if got := <-order; got != "B" {
		t.Fatalf("the freed worker went to %s, want B (nothing running)", got)
	}
	if got := <-order; got != "A" {
		t.Fatalf("then %s, want A", got)
	}
	for _, r := range releases[1:] {
		r()
	}
	waiters.Wait()
	if a.inUse() != 0 {
		t.Fatalf("in use = %d after every release", a.inUse())
	}
}

// TestWaitersFailWithBusyOrClosed: a waiter gets ErrBusy at its deadline
// or when its context ends, and ErrClosed when the admission closes.
func TestWaitersFailWithBusyOrClosed(t *testing.T) {
	a := newAdmission(1, 1)
	release := take(t, a, "A")
	if _, err := a.admit(t.Context(), "B", time.Now().Add(50*time.Millisecond)); !errors.Is(err, ErrBusy) {
		t.Fatalf("past the deadline: %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.admit(ctx, "B", time.Now().Add(time.Minute)); !errors.Is(err, ErrBusy) {
		t.Fatalf("canceled: %v, want ErrBusy", err)
	}
	done := make(chan error)
	go func() {
		_, err := a.admit(t.Context(), "B", time.Now().Add(time.Minute))
		done <- err
	}()
	waitQueued(t, a, 1)
	a.close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("closed while waiting: %v, want ErrClosed", err)
	}
	release()
	if _, err := a.admit(t.Context(), "B", time.Now().Add(time.Minute)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v, want ErrClosed", err)
	}
}

// waitQueued waits until n invocations are waiting.
func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		a.mu.Lock()
		q := len(a.queue)
		a.mu.Unlock()
		if q == n {
			return
		}
	}
	t.Fatalf("never %d waiting", n)
}
