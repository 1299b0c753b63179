// Package backoff computes the waits of a retry loop: exponential, capped,
// with "equal" jitter, so that many clients failing together (every
// webhook of a reactor whose receiver went down, every instance's audit
// exporter facing the same sink) do not retry in lockstep.
//
// The n-th wait (n from 0) is drawn uniformly from [c/2, c], where
// c = min(Base·2ⁿ, Max). Half of it is fixed, so a wait is never shorter
// than half the plain doubling; none is longer than it, so a retry never
// comes later than it would without jitter.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Backoff yields the waits of one retry loop. Set Base (and Max when the
// waits are capped) and call Next before each wait; Reset after a success.
// A Backoff is not safe for concurrent use: give each loop its own.
type Backoff struct {
	// Base is the ceiling of the first wait; each later ceiling doubles.
	// Zero or less: every wait is zero.
	Base time.Duration
	// Max caps the ceiling. Zero or less: no cap (the ceiling still stops
	// doubling before it overflows).
	Max time.Duration
	// Rand draws the jitter. Nil: math/rand/v2's global source. Tests set
	// a seeded source to make the waits reproducible.
	Rand *rand.Rand

	ceil time.Duration // of the next wait; zero until the first Next
}

// Next returns the wait before the next attempt and advances the ceiling.
func (b *Backoff) Next() time.Duration {
	if b.Base <= 0 {
		return 0
	}
	if b.ceil == 0 {
		b.ceil = b.capped(b.Base)
	}
	c := b.ceil
	if c < 1<<62 { // doubling would overflow past it
		b.ceil = b.capped(c * 2)
	}
	half := c / 2
	return c - half + b.int64N(int64(half)+1)
}

// Reset makes the next wait the first one again.
func (b *Backoff) Reset() { b.ceil = 0 }

func (b *Backoff) capped(d time.Duration) time.Duration {
	if b.Max > 0 && d > b.Max {
		return b.Max
	}
	return d
}

func (b *Backoff) int64N(n int64) time.Duration {
	if b.Rand != nil {
		return time.Duration(b.Rand.Int64N(n))
	}
	return time.Duration(rand.Int64N(n))
}
