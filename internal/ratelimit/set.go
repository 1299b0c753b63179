package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Set is one token bucket (golang.org/x/time/rate) per name (a key's MAC,
// a tenant id, an address, an application and address), all of one rate
// and burst. A nil *Set is no limit: it admits everything. It is safe for
// concurrent use.
type Set struct {
	limit rate.Limit
	burst int
	// idle is how long a bucket takes to refill from empty: one idle that
	// long is full again, and so may be forgotten.
	idle time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastEvict time.Time
}

// bucket is a limiter and the latest clock reading it was given: a
// rate.Limiter given an earlier reading than its latest takes it as its
// latest, and credits the same interval again on the next later one, so
// readings before last are given to it as last.
type bucket struct {
	l    *rate.Limiter
	last time.Time
}

// NewSet returns the buckets of perSecond events a second, of which
// burstSeconds' worth (at least one) may come at once; nil (no limit)
// when perSecond is not positive or is +Inf.
func NewSet(perSecond, burstSeconds float64) *Set {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) {
		return nil
	}
	burst := int(math.Min(math.Ceil(perSecond*burstSeconds), math.MaxInt32))
	burst = max(burst, 1)
	idle := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &Set{limit: rate.Limit(perSecond), burst: burst, idle: max(idle, time.Second), buckets: map[string]*bucket{}}
}

// get returns the bucket of name, creating it full, with the clock reading
// to give it (now, or its latest if now is before that), and forgets idle
// buckets now and then. s.mu must be held.
func (s *Set) get(name string, now time.Time) (*bucket, time.Time) {
	if now.Sub(s.lastEvict) >= s.idle {
		for n, b := range s.buckets {
			if now.Sub(b.last) >= s.idle {
				delete(s.buckets, n)
			}
		}
		s.lastEvict = now
	}
	b := s.buckets[name]
	if b == nil {
		b = &bucket{l: rate.NewLimiter(s.limit, s.burst), last: now}
		s.buckets[name] = b
	}
	if now.After(b.last) {
		b.last = now
	}
	return b, b.last
}

// wait is how long from now until b holds one event at its reading at.
func (s *Set) wait(b *bucket, at, now time.Time) time.Duration {
	missing := 1 - b.l.TokensAt(at)
	// Past now: a bucket's clock may be ahead of this call's reading.
	return time.Duration(math.Ceil(missing/float64(s.limit)*float64(time.Second))) + max(at.Sub(now), 0)
}

// Take takes one event from name's bucket at now, or reports how long
// until one is available (and takes nothing).
func (s *Set) Take(name string, now time.Time) (ok bool, retryAfter time.Duration) {
	if s == nil {
		return true, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, at := s.get(name, now)
	if b.l.AllowN(at, 1) {
		return true, 0
	}
	return false, s.wait(b, at, now)
}

// Size is the number of buckets s holds (0 for nil), so that a test can
// check that idle ones are forgotten.
func (s *Set) Size() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}

// Limit, Burst and Idle are what NewSet made of its arguments: events a
// second, events at once, and how long an idle bucket is kept (at least a
// second). They let a test compare two resolved configurations.
func (s *Set) Limit() float64 { return float64(s.limit) }

// Burst is the events a full bucket holds (see Limit).
func (s *Set) Burst() int { return s.burst }

// Idle is how long a bucket not taken from is kept (see Limit).
func (s *Set) Idle() time.Duration { return s.idle }
