package ratelimit

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestNewSet: a rate that is not positive and finite is no limit (nil);
// else the burst is burstSeconds' worth rounded up, at least one, and an
// idle bucket is kept as long as it takes to refill, at least a second.
func TestNewSet(t *testing.T) {
	for _, perSecond := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if s := NewSet(perSecond, 1); s != nil {
			t.Errorf("NewSet(%v, 1) = %+v, want nil", perSecond, s)
		}
	}
	for _, tc := range []struct {
		perSecond, burstSeconds float64
		burst                   int
		idle                    time.Duration
	}{
		{2, 1, 2, time.Second},
		{100.0 / 60, 60, 100, time.Minute},
		{5, 10, 50, 10 * time.Second},
		{0.5, 1, 1, 2 * time.Second},
		{1000, 0, 1, time.Second},
		{math.MaxFloat64, 1, math.MaxInt32, time.Second},
	} {
		s := NewSet(tc.perSecond, tc.burstSeconds)
		if s.Limit() != tc.perSecond || s.Burst() != tc.burst || s.Idle() != tc.idle {
			t.Errorf("NewSet(%v, %v) = limit %v, burst %d, idle %v; want %v, %d, %v",
				tc.perSecond, tc.burstSeconds, s.Limit(), s.Burst(), s.Idle(), tc.perSecond, tc.burst, tc.idle)
		}
	}
}

// TestNilSetAdmitsEverything: a nil Set is no limit.
func TestNilSetAdmitsEverything(t *testing.T) {
	var s *Set
	for i := range 1000 {
		if ok, wait := s.Take("a", t0); !ok || wait != 0 {
			t.Fatalf("nil Set: Take %d = %v, %v; want true, 0", i, ok, wait)
		}
	}
	if n := s.Size(); n != 0 {
		t.Errorf("nil Set: Size() = %d, want 0", n)
	}
}

// TestSetTakeBurstThenRefill: a name gets its burst at once, then one
// event per 1/rate; a refused Take says how long until the next and takes
// nothing; another name has its own bucket.
func TestSetTakeBurstThenRefill(t *testing.T) {
	s := NewSet(2, 1)
	for i := range 2 {
		if ok, _ := s.Take("a", t0); !ok {
			t.Fatalf("Take %d within the burst refused", i)
		}
	}
	for range 3 {
		if ok, wait := s.Take("a", t0); ok || wait != 500*time.Millisecond {
			t.Errorf("Take past the burst = %v, %v; want false, 500ms", ok, wait)
		}
	}
	if ok, _ := s.Take("b", t0); !ok {
		t.Error("another name refused")
	}
	if ok, wait := s.Take("a", t0.Add(200*time.Millisecond)); ok || wait != 300*time.Millisecond {
		t.Errorf("Take 200ms later = %v, %v; want false, 300ms", ok, wait)
	}
	if ok, _ := s.Take("a", t0.Add(500*time.Millisecond)); !ok {
		t.Error("Take 500ms later refused")
	}
	if ok, _ := s.Take("a", t0.Add(500*time.Millisecond)); ok {
		t.Error("a second Take 500ms later admitted")
	}
}

// TestSetClockNeverGoesBack: readings that step back and forth credit the
// interval once; a reading behind the bucket's latest is answered from the
// latest, with the wait counted from the earlier reading.
func TestSetClockNeverGoesBack(t *testing.T) {
	s := NewSet(100, 1)
	ok := 0
	for i := range 400 {
		now := t0
		if i%2 == 1 {
			now = t0.Add(10 * time.Millisecond)
		}
		if took, _ := s.Take("a", now); took {
			ok++
		}
	}
	// 100 at once, plus one for the 10 ms.
	if ok != 101 {
		t.Errorf("%d admitted, want 101", ok)
	}
	if took, wait := s.Take("a", t0); took || wait != 20*time.Millisecond {
		t.Errorf("Take at a reading 10ms behind the bucket's = %v, %v; want false, 20ms", took, wait)
	}
}

// TestSetForgetsIdleBuckets: buckets not taken from for as long as a full
// one takes to refill are dropped by the next Take once that long has
// passed; a forgotten bucket is full again, as it would have been.
func TestSetForgetsIdleBuckets(t *testing.T) {
	s := NewSet(10, 1)
	for i := range 50 {
		s.Take(fmt.Sprint("n", i), t0)
	}
	for range 10 {
		s.Take("busy", t0)
	}
	if n := s.Size(); n != 51 {
		t.Fatalf("Size() = %d, want 51", n)
	}
	s.Take("busy", t0.Add(999*time.Millisecond))
	if n := s.Size(); n != 51 {
		t.Errorf("Size() = %d before a bucket could refill, want 51", n)
	}
	s.Take("busy", t0.Add(2*time.Second))
	if n := s.Size(); n != 1 {
		t.Errorf("Size() = %d once the idle ones refilled, want 1", n)
	}
	for i := range 10 {
		if ok, _ := s.Take("n0", t0.Add(2*time.Second)); !ok {
			t.Fatalf("forgotten bucket: Take %d refused, want a full bucket", i)
		}
	}
}

// TestSetConcurrentTakes: concurrent Takes at one instant admit exactly
// the burst.
func TestSetConcurrentTakes(t *testing.T) {
	t.Parallel()
	s := NewSet(20, 1)
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				if took, _ := s.Take("a", t0); took {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if ok != 20 {
		t.Errorf("%d of 160 concurrent Takes admitted, want 20", ok)
	}
}
