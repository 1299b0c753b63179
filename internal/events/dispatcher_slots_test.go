package events

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReserveBoundsSlots: a webhook gets at most ConcurrencyPerWebhook
// slots and a tenant at most ConcurrencyPerTenant; released slots can be
// taken again, and another tenant's are its own.
func TestReserveBoundsSlots(t *testing.T) {
	t.Parallel()
	d := NewDispatcher(Config{Options: Options{ConcurrencyPerWebhook: 2, ConcurrencyPerTenant: 3}, Now: time.Now})
	a1, a2, b1 := Key{"a", "1"}, Key{"a", "2"}, Key{"b", "1"}
	if got := d.Reserve(a1, 5); got != 2 {
		t.Errorf("Reserve(a/1, 5) = %d, want 2", got)
	}
	if got := d.Reserve(a2, 5); got != 1 {
		t.Errorf("Reserve(a/2, 5) = %d, want 1 (the tenant's third)", got)
	}
	if got := d.Reserve(b1, 5); got != 2 {
		t.Errorf("Reserve(b/1, 5) = %d, want 2", got)
	}
	d.Release(a1, 2)
	if got := d.Reserve(a2, 5); got != 1 {
		t.Errorf("after a release, Reserve(a/2, 5) = %d, want 1", got)
	}
}

// TestWakeForNamesHotWebhooks: WakeFor wakes the dispatcher once however
// often it is called, and TakeHot returns each webhook once.
func TestWakeForNamesHotWebhooks(t *testing.T) {
	t.Parallel()
	d := NewDispatcher(Config{Now: time.Now})
	d.WakeFor(Key{"a", "1"})
	d.WakeFor(Key{"a", "1"})
	d.WakeFor(Key{"b", "2"})
	select {
	case <-d.Woken():
	default:
		t.Fatal("WakeFor did not wake the dispatcher")
	}
	hot := d.TakeHot()
	slices.SortFunc(hot, func(x, y Key) int {
		return strings.Compare(x.Tenant+"/"+x.Webhook, y.Tenant+"/"+y.Webhook)
	})
	if want := []Key{{"a", "1"}, {"b", "2"}}; !slices.Equal(hot, want) {
		t.Errorf("TakeHot() = %v, want %v", hot, want)
	}
	if hot := d.TakeHot(); len(hot) != 0 {
		t.Errorf("second TakeHot() = %v, want none", hot)
	}
}

// TestPendingCounts: a count is known once Set, changes by Add (never
// below zero), is summed by Total, and goes with Forget; Want notes a
// webhook once until TakeWanted takes it.
func TestPendingCounts(t *testing.T) {
	t.Parallel()
	var c PendingCounts
	k := Key{"a", "1"}
	if _, _, ok := c.Get(k); ok {
		t.Fatal("a count before Set")
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Add(k, 5) // no count yet: nothing to change
	c.Set(k, 3, at)
	c.Add(k, 2)
	c.Add(k, -10)
	if n, counted, ok := c.Get(k); !ok || n != 0 || !counted.Equal(at) {
		t.Errorf("Get = %d, %v, %v, want 0, %v, true", n, counted, ok, at)
	}
	c.Set(Key{"a", "2"}, 4, at)
	c.Add(k, 1)
	if n := c.Total(); n != 5 {
		t.Errorf("Total() = %d, want 5", n)
	}
	c.Forget(k)
	if n := c.Total(); n != 4 {
		t.Errorf("after Forget, Total() = %d, want 4", n)
	}
	if !c.Want(k) || c.Want(k) {
		t.Error("Want did not note the webhook exactly once")
	}
	if got := c.TakeWanted(); !slices.Equal(got, []Key{k}) {
		t.Errorf("TakeWanted() = %v, want [%v]", got, k)
	}
	if !c.Want(k) {
		t.Error("Want after TakeWanted was refused")
	}
}

// TestDropLogsOncePerRecount: drops are reported at once, then summed
// until PendingRecount has passed.
func TestDropLogsOncePerRecount(t *testing.T) {
	t.Parallel()
	var c PendingCounts
	k := Key{"a", "1"}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Set(k, 0, at)
	if n := c.Drop(k, 2, at); n != 2 {
		t.Errorf("first Drop = %d, want 2", n)
	}
	if n := c.Drop(k, 3, at.Add(time.Second)); n != 0 {
		t.Errorf("Drop within PendingRecount = %d, want 0", n)
	}
	if n := c.Drop(k, 1, at.Add(PendingRecount)); n != 4 {
		t.Errorf("Drop after PendingRecount = %d, want 4", n)
	}
}
