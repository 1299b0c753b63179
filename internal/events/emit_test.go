package events

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// tapped is an event a committed unit of work queued, as the tap saw it.
type tapped struct {
	tid     string
	info    Info
	targets []string // tenant/webhook id
}

// tap makes h's Service tell the returned function's result of every
// event a committed unit of work queued.
func (h *harness) tap(t *testing.T) func() []tapped {
	t.Helper()
	var mu sync.Mutex
	var got []tapped
	h.svc.Tap = func(tid string, ev Outgoing, targets []*Webhook) {
		te := tapped{tid: tid}
		if err := json.Unmarshal(ev.JSON, &te.info); err != nil {
			t.Errorf("an event's JSON: %v", err)
		}
		for _, w := range targets {
			te.targets = append(te.targets, w.TenantID+"/"+w.ID)
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, te)
	}
	return func() []tapped {
		mu.Lock()
		defer mu.Unlock()
		return append([]tapped(nil), got...)
	}
}

// memberEvent is an event of a member of tenant tid, made by the system.
func memberEvent(tid string) unit.Event {
	return unit.Event{TenantID: tid, Type: TenantMemberCreated, By: unit.SystemActor, ObjectName: "member",
		EntityType: unit.EntityTenantMember, EntityID: "m1", View: func() any { return map[string]string{"id": "m1"} }}
}

// TestEmitThenFailCommitsNoEvent: a unit of work that emitted and then
// failed (a conflict found later in it) queues nothing, whether it ran as
// a plain update or an optimistic one; the same unit of work without the
// failure queues its event.
func TestEmitThenFailCommitsNoEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	events := h.tap(t)
	h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{TenantMemberCreated}})
	ctx := context.Background()
	for name, run := range map[string]func(context.Context, func(*unit.Tx) error) error{"update": h.work.Update, "optimistic": h.work.UpdateOptimistic} {
		err := run(ctx, func(tx *unit.Tx) error {
			if err := tx.Emit(memberEvent(p.TenantID)); err != nil {
				return err
			}
			return unit.Errorf(unit.Conflict, "a conflict after the event")
		})
		if e, ok := err.(*unit.Error); !ok || e.Kind != unit.Conflict {
			t.Fatalf("%s: %v, want the conflict", name, err)
		}
		if n := len(events()); n != 0 {
			t.Fatalf("%s: a rolled-back unit of work queued %d events", name, n)
		}
	}
	if err := h.work.Update(ctx, func(tx *unit.Tx) error { return tx.Emit(memberEvent(p.TenantID)) }); err != nil {
		t.Fatal(err)
	}
	if evs := events(); len(evs) != 1 || evs[0].info.Type != TenantMemberCreated {
		t.Fatalf("the committed emit queued %+v", evs)
	}
}

// TestWritesForgetTargets: a unit of work that creates a webhook and
// then emits sees it among the targets (Forget drops the targets it read
// before).
func TestWritesForgetTargets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tid := h.tenant(t, "t1").TenantID
	err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
		et, _ := Lookup(TokenCreated)
		before, err := h.svc.Targets(tx, tid, et)
		if err != nil || len(before) != 0 {
			t.Fatalf("targets before: %v, %v", before, err)
		}
		rec := &Webhook{ID: h.svc.IDs.Next(tx.Now), TenantID: tid, Name: "h", URL: "https://hooks.example.com/in",
			Events: []string{"*"}, Status: Enabled, Secret: NewSecret(), CreatedAt: tx.Now}
		if err := tx.PutRecord(barrier.Tenant(tid).Record(unit.EntityWebhook, rec.ID), rec); err != nil {
			return err
		}
		Forget(tx, tid)
		after, err := h.svc.Targets(tx, tid, et)
		if err != nil || len(after) != 1 {
			t.Errorf("targets after the write: %v, %v", after, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTargetsAreTheTenants: a change of one tenant is queued for its own
// subscribed, enabled webhooks only: never another tenant's, whatever
// that one subscribes to, nor its own disabled or unsubscribed ones.
func TestTargetsAreTheTenants(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := h.tenant(t, "ta"), h.tenant(t, "tb")
	hook := func(p *access.Principal, name, status string, events ...string) string {
		t.Helper()
		return h.create(t, p, Request{Name: name, URL: "https://hooks.example.com/" + name, Events: events, Status: status}).ID
	}
	mine := hook(a, "mine", "", TokenCreated)
	hook(a, "off", Disabled, "*")
	hook(a, "other-type", "", TokenDeleted)
	hook(b, "theirs", "", "*", TokenCreated)
	events := h.tap(t)
	err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
		return tx.Emit(unit.Event{TenantID: a.TenantID, Type: TokenCreated, By: a.Actor(), ObjectName: "token",
			EntityType: unit.EntityToken, EntityID: "tok1", View: func() any { return map[string]string{"id": "tok1"} }})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := a.TenantID + "/" + mine
	if evs := events(); len(evs) != 1 || evs[0].tid != a.TenantID || len(evs[0].targets) != 1 || evs[0].targets[0] != want {
		t.Errorf("token.created of tenant A queued %+v, want for %s only", evs, want)
	}
}

// TestEmitWithoutSubscriberBuildsNothing: an event no webhook subscribes
// to builds no view and writes nothing, not even the object's sequence
// counter.
func TestEmitWithoutSubscriberBuildsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{TokenDeleted}})
	built := false
	err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
		return tx.Emit(unit.Event{TenantID: p.TenantID, Type: TokenCreated, By: p.Actor(), ObjectName: "token",
			EntityType: unit.EntityToken, EntityID: "tok1", View: func() any { built = true; return nil }})
	})
	if err != nil {
		t.Fatal(err)
	}
	if built {
		t.Error("the view of an event nobody subscribes to was built")
	}
	err = h.work.View(context.Background(), func(tx *unit.Tx) error {
		ok, err := tx.GetRecord(barrier.Tenant(p.TenantID).EventSequence(unit.EntityToken, "tok1"), &sequence{codec: worktest.Counts})
		if ok {
			t.Error("an event nobody subscribes to wrote its object's sequence counter")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSequenceGrowsAndEnds: an object's events are numbered from the
// unit of work's time in microseconds up, one more each time even when
// the clock stands still; the event that ends the object removes its
// counter, and an object made again with its id later numbers its
// events from that time.
func TestSequenceGrowsAndEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	events := h.tap(t)
	emit := func(typ string) {
		t.Helper()
		err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
			return tx.Emit(unit.Event{TenantID: p.TenantID, Type: typ, By: p.Actor(), ObjectName: "token",
				EntityType: unit.EntityToken, EntityID: "tok1", View: func() any { return map[string]string{"id": "tok1"} }})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	emit(TokenCreated)
	emit(TokenUpdated)
	emit(TokenDeleted)
	err := h.work.View(context.Background(), func(tx *unit.Tx) error {
		ok, err := tx.GetRecord(barrier.Tenant(p.TenantID).EventSequence(unit.EntityToken, "tok1"), &sequence{codec: worktest.Counts})
		if ok {
			t.Error("token.deleted left the object's sequence counter")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	start := h.work.Now().UnixMicro()
	h.work.Advance(time.Second)
	emit(TokenCreated)
	evs := events()
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	for i, want := range []int64{start, start + 1, start + 2, h.work.Now().UnixMicro()} {
		if got := evs[i].info.Sequence; got != want {
			t.Errorf("event %d (%s): sequence %d, want %d", i, evs[i].info.Type, got, want)
		}
	}
}
