package ratelimit

import (
	"sync"
	"time"
)

// Flood bounds the lines a flood of events may write per name (a
// tenant's denied calls, in the Vault): a token bucket of perMinute lines
// a minute per name (a full bucket holds a minute's worth), and past it a
// count of the events it refused, reported at most once a minute per
// name (Admit's summary), so that a flood costs a bounded number of lines
// and each name's flood only its own. It keeps, in this process's memory,
// the buckets (forgotten once full again, as every Set's) and a count per
// name with events refused, at most maxNames of them; refusals of further
// names are counted in Lost only. A nil *Flood admits everything. It is
// safe for concurrent use.
type Flood struct {
	set      *Set
	maxNames int

	mu   sync.Mutex
	held map[string]*heldCount
	lost int64
}

// heldCount is the events of one name refused since since.
type heldCount struct {
	n     int
	since time.Time
}

// summaryEvery is how often a name's refused events are reported.
const summaryEvery = time.Minute

// NewFlood returns the bound of perMinute lines a minute per name,
// counting refusals for at most maxNames names at once; nil (no bound)
// when perMinute is not positive.
func NewFlood(perMinute, maxNames int) *Flood {
	if perMinute <= 0 {
		return nil
	}
	return &Flood{set: NewSet(float64(perMinute)/60, 60), maxNames: maxNames, held: map[string]*heldCount{}}
}

// Admit reports whether the event of name at now may write its line, and
// summary, when positive, the events of name refused since a minute or
// more before now, this one included if refused: the caller writes one
// line that says so. A name's summary is due with its first event a
// minute after its first refusal.
func (f *Flood) Admit(name string, now time.Time) (ok bool, summary int) {
	if f == nil {
		return true, 0
	}
	ok, _ = f.set.Take(name, now)
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.held[name]
	if !ok {
		switch {
		case h != nil:
			h.n++
		case len(f.held) < f.maxNames:
			h = &heldCount{n: 1, since: now}
			f.held[name] = h
		default:
			f.lost++
			return false, 0
		}
	}
	if h != nil && now.Sub(h.since) >= summaryEvery {
		delete(f.held, name)
		return ok, h.n
	}
	return ok, 0
}

// Held is how many events of name were refused and not reported yet.
func (f *Flood) Held(name string) int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.held[name]; h != nil {
		return h.n
	}
	return 0
}

// Lost is how many events were refused while maxNames names already had
// refusals held: counted nowhere else.
func (f *Flood) Lost() int64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}
