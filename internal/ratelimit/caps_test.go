package ratelimit

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// index is a Scanner over entries kept in memory, in key order.
type index map[string]bool

func (x index) Scan(p barrier.Prefix, after string, limit int, fn func(barrier.Key, string) error) error {
	var keys []string
	for k := range x {
		if strings.HasPrefix(k, p.String()) && (after == "" || k > p.String()+after) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		if limit > 0 && i == limit {
			break
		}
		if err := fn(p.Found([]byte(k))); err != nil {
			return err
		}
	}
	return nil
}

// add indexes object id of creator from addr, expiring at expires.
func (x index) add(creator, addr, id string, expires time.Time) {
	for _, k := range barrier.Tenant("t1").CapEntries(barrier.PendingSessionCaps, creator, addr, expires, id) {
		x[k.String()] = true
	}
}

// remove drops object id's entries, as its feature's deletion does.
func (x index) remove(id string) {
	for k := range x {
		if strings.HasSuffix(k, "/"+id) {
			delete(x, k)
		}
	}
}

// TestMakeRoom: at its address's cap a creation evicts the address's own
// oldest live object; at the creator's ceiling, from an address under its
// cap, it is refused with the time until the creator's oldest expires;
// expired objects never count; 0 or less is no cap.
func TestMakeRoom(t *testing.T) {
	x := index{}
	var evicted []string
	evict := func(entry barrier.Key, id string) error {
		if !x[entry.String()] {
			t.Errorf("evict(%s, %s): not an entry of the index", entry, id)
		}
		evicted = append(evicted, id)
		x.remove(id)
		return nil
	}
	errFull := errors.New("full")
	var refusedAfter time.Duration
	refuse := func(d time.Duration) error { refusedAfter = d; return errFull }
	room := func(now time.Time, addr string, perAddress, ceiling int) error {
		return MakeRoom(x, now, barrier.PendingSessionCaps, "t1", "app", addr, perAddress, ceiling, evict, refuse)
	}
	now := t0
	// A expires first at +10s, then a2 and a3; B one at +5s (the oldest).
	x.add("app", "A", "a1", now.Add(10*time.Second))
	x.add("app", "A", "a2", now.Add(20*time.Second))
	x.add("app", "A", "a3", now.Add(30*time.Second))
	x.add("app", "B", "b1", now.Add(5*time.Second))
	x.add("other", "C", "c1", now.Add(time.Second))

	if err := room(now, "C", 3, 5); err != nil || len(evicted) != 0 {
		t.Fatalf("C under both caps: %v, evicted %v", err, evicted)
	}
	if err := room(now, "A", 3, 5); err != nil || !slices.Equal(evicted, []string{"a1"}) {
		t.Fatalf("A at its cap: %v, evicted %v; want a1 evicted", err, evicted)
	}
	x.add("app", "A", "a4", now.Add(40*time.Second))
	x.add("app", "D", "d1", now.Add(50*time.Second))
	// app holds a2, a3, a4, b1, d1: five.
	if err := room(now, "C", 3, 5); err != errFull || refusedAfter != 5*time.Second {
		t.Errorf("C at the creator's ceiling: %v, refused for %v; want refused until b1 expires (5s)", err, refusedAfter)
	}
	if err := room(now, "A", 3, 5); err != nil || !slices.Equal(evicted, []string{"a1", "a2"}) {
		t.Errorf("A at its cap and the ceiling: %v, evicted %v; want its own a2 evicted", err, evicted)
	}
	// b1 expires at +5s: at that instant it no longer counts.
	if err := room(now.Add(5*time.Second), "C", 3, 4); err != nil {
		t.Errorf("C once b1 expired: %v", err)
	}
	if err := room(now, "A", 0, 0); err != nil || len(evicted) != 2 {
		t.Errorf("no caps: %v, evicted %v", err, evicted)
	}
	if err := room(now, "A", -1, -1); err != nil || len(evicted) != 2 {
		t.Errorf("negative caps: %v, evicted %v", err, evicted)
	}
	// The error of evict is the creation's.
	errEvict := errors.New("evict failed")
	err := MakeRoom(x, now, barrier.PendingSessionCaps, "t1", "app", "A", 1, 0,
		func(barrier.Key, string) error { return errEvict }, refuse)
	if err != errEvict {
		t.Errorf("evict failing: %v, want its error", err)
	}
}

// TestTimeOfKey: a rendered time reads back; anything else is the default.
func TestTimeOfKey(t *testing.T) {
	def := t0.Add(time.Minute)
	if got := timeOfKey(barrier.TimeKey(t0), def); !got.Equal(t0) {
		t.Errorf("timeOfKey(TimeKey(%v)) = %v", t0, got)
	}
	for _, k := range []string{"", "zz", "0102", "00000000000000000000"} {
		if got := timeOfKey(k, def); !got.Equal(def) {
			t.Errorf("timeOfKey(%q) = %v, want the default %v", k, got, def)
		}
	}
}
