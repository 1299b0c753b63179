package backoff

import (
	"math/rand/v2"
	"testing"
	"time"
)

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// TestBounds checks every wait lies in [c/2, c] for c the capped doubling
// of Base, and that the cap holds once reached.
func TestBounds(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Rand: seeded()}
	ceil := 100 * time.Millisecond
	for i := range 20 {
		got := b.Next()
		if got < ceil/2 || got > ceil {
			t.Fatalf("wait %d = %v, want in [%v, %v]", i, got, ceil/2, ceil)
		}
		ceil = min(2*ceil, time.Second)
	}
}

// TestCap checks that once capped, every wait is at most Max and at least
// half of it.
func TestCap(t *testing.T) {
	b := Backoff{Base: time.Second, Max: time.Minute, Rand: seeded()}
	for range 6 { // 1, 2, 4, 8, 16, 32 s
		b.Next()
	}
	for i := range 100 {
		if got := b.Next(); got > time.Minute || got < 30*time.Second {
			t.Fatalf("capped wait %d = %v, want in [30s, 1m]", i, got)
		}
	}
}

// TestUncapped checks that without Max the ceiling keeps doubling, and
// stops before it overflows.
func TestUncapped(t *testing.T) {
	b := Backoff{Base: time.Second, Rand: seeded()}
	ceil := time.Second
	for i := range 5 {
		if got := b.Next(); got < ceil/2 || got > ceil {
			t.Fatalf("wait %d = %v, want in [%v, %v]", i, got, ceil/2, ceil)
		}
		ceil *= 2
	}
	for range 100 {
		if got := b.Next(); got <= 0 {
			t.Fatalf("wait %v after many doublings: overflowed", got)
		}
	}
}

// TestJitter checks the waits at one step differ between loops: over 50
// loops drawn from one seeded source, the first wait takes many values.
func TestJitter(t *testing.T) {
	r := seeded()
	seen := map[time.Duration]bool{}
	for range 50 {
		b := Backoff{Base: time.Second, Rand: r}
		seen[b.Next()] = true
	}
	if len(seen) < 45 {
		t.Fatalf("50 first waits took %d distinct values, want jitter", len(seen))
	}
}

// TestDeterministic checks two Backoffs with the same seed draw the same
// waits, so tests that seed them can rely on their values.
func TestDeterministic(t *testing.T) {
	a := Backoff{Base: time.Second, Max: time.Minute, Rand: seeded()}
	b := Backoff{Base: time.Second, Max: time.Minute, Rand: seeded()}
	for i := range 20 {
		if x, y := a.Next(), b.Next(); x != y {
			t.Fatalf("wait %d: %v and %v from the same seed", i, x, y)
		}
	}
}

// TestReset checks Reset starts the doubling over.
func TestReset(t *testing.T) {
	b := Backoff{Base: time.Second, Rand: seeded()}
	for range 10 {
		b.Next()
	}
	b.Reset()
	if got := b.Next(); got < time.Second/2 || got > time.Second {
		t.Fatalf("first wait after Reset = %v, want in [0.5s, 1s]", got)
	}
}

// TestZeroBase checks a zero Base waits not at all, and a nil Rand uses
// the global source.
func TestZeroBase(t *testing.T) {
	var b Backoff
	if got := b.Next(); got != 0 {
		t.Fatalf("zero Backoff waited %v", got)
	}
	b = Backoff{Base: time.Millisecond}
	if got := b.Next(); got < time.Millisecond/2 || got > time.Millisecond {
		t.Fatalf("wait from the global source = %v", got)
	}
}
