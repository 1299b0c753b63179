package ratelimit

import "time"

// TakeBoth takes one event from a's bucket an and one from b's bucket bn
// at now, or neither: a call refused by one limit is not charged to the
// other. Either set may be nil (no limit); a and b are two sets, never
// one twice. Callers lock a before b, always
// in the same order (the Vault: per key, then per tenant), so that two
// calls never wait on each other's set. It returns the set that refused
// (nil when both took), and how long until it would not.
func TakeBoth(a *Set, an string, b *Set, bn string, now time.Time) (refused *Set, retryAfter time.Duration) {
	type held struct {
		s  *Set
		b  *bucket
		at time.Time
	}
	var hs []held
	for _, x := range []struct {
		s    *Set
		name string
	}{{a, an}, {b, bn}} {
		if x.s == nil {
			continue
		}
		x.s.mu.Lock()
		defer x.s.mu.Unlock()
		bk, at := x.s.get(x.name, now)
		if bk.l.TokensAt(at) < 1 {
			return x.s, x.s.wait(bk, at, now)
		}
		hs = append(hs, held{x.s, bk, at})
	}
	for _, h := range hs {
		h.b.l.AllowN(h.at, 1) // each holds an event, under its set's lock
	}
	return nil, 0
}
