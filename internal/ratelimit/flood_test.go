package ratelimit

import (
	"testing"
	"time"
)

// TestFlood: a flood writes the bound, then one summary a minute later
// counting what it refused; another name is untouched; names past
// maxNames are counted as lost.
func TestFlood(t *testing.T) {
	t.Parallel()
	f := NewFlood(10, 2)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	admitted, summaries := 0, 0
	for range 10000 {
		ok, s := f.Admit("a", now)
		if ok {
			admitted++
		}
		summaries += s
	}
	if admitted != 10 || summaries != 0 {
		t.Fatalf("10,000 events at once: admitted %d, summarized %d; want 10, 0", admitted, summaries)
	}
	if got := f.Held("a"); got != 9990 {
		t.Errorf("Held(a) = %d, want 9990", got)
	}
	if ok, _ := f.Admit("b", now); !ok {
		t.Errorf("Admit(b) after a's flood = false, want true")
	}
	ok, s := f.Admit("a", now.Add(time.Minute))
	if !ok || s != 9990 {
		t.Errorf("Admit(a) a minute later = %v, %d; want true, 9990", ok, s)
	}
	if got := f.Held("a"); got != 0 {
		t.Errorf("Held(a) after its summary = %d, want 0", got)
	}
	// b and c fill the two held names; d is lost.
	for _, n := range []string{"b", "c", "d"} {
		for range 11 {
			f.Admit(n, now.Add(time.Minute))
		}
	}
	if got := f.Lost(); got != 1 {
		t.Errorf("Lost() = %d, want 1", got)
	}
	if ok, s := (*Flood)(nil).Admit("x", now); !ok || s != 0 {
		t.Errorf("nil Flood: Admit = %v, %d; want true, 0", ok, s)
	}
}
