package access

import (
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestRevealCounter: a budget of 3 distinct tokens lets 3 through, and a
// reread of one of them; the 4th is refused, and only the call that
// crossed the budget reports the trip (until Untrip); a new window, a
// changed budget or Forget begins again.
func TestRevealCounter(t *testing.T) {
	var c RevealCounter
	b := RevealBudget{Tokens: 3, Window: "1h", Action: BudgetMask}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	first, second := &unit.CallInfo{}, &unit.CallInfo{}
	for i := range 3 {
		if ok, tripped := c.Count("t/app", b, fmt.Sprint(i), first, now); !ok || tripped {
			t.Fatalf("token %d within the budget: ok %v, tripped %v", i, ok, tripped)
		}
	}
	if ok, _ := c.Count("t/app", b, "0", first, now); !ok {
		t.Error("a token counted in the window, read again, was refused")
	}
	if ok, tripped := c.Count("t/app", b, "3", first, now); ok || !tripped {
		t.Errorf("the 4th token: ok %v, tripped %v; want refused, the trip reported", ok, tripped)
	}
	if ok, tripped := c.Count("t/app", b, "4", second, now); ok || tripped {
		t.Errorf("another call past the budget: ok %v, tripped %v; want refused, no second report", ok, tripped)
	}
	c.Untrip("t/app", first)
	if _, tripped := c.Count("t/app", b, "5", second, now); !tripped {
		t.Error("after Untrip, the next call past the budget did not report the trip")
	}
	if ok, _ := c.Count("t/other", b, "3", first, now); !ok {
		t.Error("another application shares the first one's window")
	}
	if ok, _ := c.Count("t/app", b, "3", first, now.Add(time.Hour)); !ok {
		t.Error("a new window did not begin after an hour")
	}
	wider := b
	wider.Tokens = 10
	if ok, _ := c.Count("t/app", wider, "9", first, now.Add(time.Hour)); !ok {
		t.Error("a changed budget did not begin a new window")
	}
	c.Forget("t/app")
	for i := range 3 {
		if ok, _ := c.Count("t/app", b, fmt.Sprint(100+i), first, now.Add(time.Hour)); !ok {
			t.Errorf("after Forget, token %d was refused", i)
		}
	}
}
