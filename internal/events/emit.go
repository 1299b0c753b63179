package events

import (
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The outbox's entry point: every unit of work's Tx.Emit.
//
// A change emits its events in the unit of work that makes it (Tx.Emit,
// beside its audit line): an acknowledged change always has its events
// queued for delivery, a rolled-back one never has. When no enabled
// webhook of the tenant subscribes to the event's type, Emit writes
// nothing and reads nothing: the tenant's subscriptions come from the
// cache (subscriptions_read.go). With subscribers, the commit writes the
// event's outbox entries (outbox.go) and the object's sequence counter,
// and reads only that counter: no webhook record, no pending index, no
// application record.

// Emit queues an event of type e.Type about an object (the JSON view that
// e.View builds, named e.ObjectName, of the entity e.EntityType/EntityID)
// made by e.By, for every enabled webhook of tenant e.TenantID subscribed
// to it, in t. It writes nothing, and builds no view, when none is.
func (s *Service) Emit(t *unit.Tx, e unit.Event) error {
	tid, typ, by, objectName, entityType, entityID, view := e.TenantID, e.Type, e.By, e.ObjectName, e.EntityType, e.EntityID, e.View
	et, ok := Lookup(typ)
	if !ok {
		return fmt.Errorf("tokenvault: event type %q is not in the catalogue", typ)
	}
	targets, err := s.Targets(t, tid, et)
	if err != nil || len(targets) == 0 {
		return err
	}
	info := Info{ID: s.IDs.Next(t.Now), Type: typ, Timestamp: t.Now, TenantID: tid, TraceID: unit.TraceID(t.Ctx)}
	if !et.HighVolume && entityID != "" {
		if info.Sequence, err = s.nextSequence(t, tid, typ, entityType, entityID); err != nil {
			return err
		}
	}
	who, err := EventActor(t, tid, by)
	if err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{objectName: view(), "actor": who})
	if err != nil {
		return fmt.Errorf("tokenvault: event %s: %w", typ, err)
	}
	info.Data = data
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("tokenvault: event %s: %w", typ, err)
	}
	if len(b) > MaxEventBytes {
		return fmt.Errorf("tokenvault: event %s is %d bytes, over %d", typ, len(b), MaxEventBytes)
	}
	ev := Outgoing{ID: info.ID, Type: typ, JSON: b}
	if err := s.Dispatch.QueueEvent(t, tid, ev, targets); err != nil {
		return err
	}
	if tap := s.Tap; tap != nil {
		t.AfterCommit(func() { tap(tid, ev, targets) })
	}
	return nil
}

// EventActor is by as events name it: an application by its name too.
// The name comes with by when it was authenticated (the principal
// carries it, read with the application, and the auth cache drops it
// when the application changes), so an event costs no read; only a unit
// of work that itself changed an application or key, or an actor named
// without it, reads the application record.
func EventActor(t *unit.Tx, tid string, by unit.Actor) (Actor, error) {
	who := Actor{ID: by.ID, Type: by.Type}
	if by.Type != unit.ActorApplication || by.ID == "" {
		return who, nil
	}
	if by.Name != "" && !t.AuthChanged() {
		who.Name = by.Name
		return who, nil
	}
	var app access.ApplicationRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityApplication, by.ID), &app)
	if err != nil {
		return who, err
	}
	if ok {
		who.Name = app.Name
	}
	return who, nil
}

// Targets returns tenant tid's enabled webhooks subscribed to et: by
// name, or by "*" when et is not high-volume. The tenant's webhooks come
// from the cache (Subscriptions): a commit reads none while they have not
// changed.
func (s *Service) Targets(t *unit.Tx, tid string, et Type) ([]*Webhook, error) {
	hooks, err := s.Subscriptions(t, tid)
	if err != nil {
		return nil, err
	}
	var out []*Webhook
	for _, h := range hooks {
		if h.Status == Enabled && Subscribes(h.Events, et) {
			out = append(out, h)
		}
	}
	return out, nil
}

// nextSequence returns the next sequence number of the events about
// entityType/entityID and keeps it: one more than the last, and at least
// the unit of work's time in microseconds, so that numbers keep growing
// when an object of the same id is made again after a deletion removed
// its counter (microseconds keep the numbers within the 2^53 a
// JavaScript receiver reads exactly). An event that ends the object
// (EndsObject) removes the counter.
func (s *Service) nextSequence(t *unit.Tx, tid, typ, entityType, entityID string) (int64, error) {
	k := barrier.Tenant(tid).EventSequence(entityType, entityID)
	last := sequence{codec: s.Counts}
	if _, err := t.GetRecord(k, &last); err != nil {
		return 0, err
	}
	next := max(last.n+1, t.Now.UnixMicro())
	if EndsObject(typ) {
		return next, t.Delete(k)
	}
	return next, t.PutRecord(k, &sequence{codec: s.Counts, n: next})
}

// sequence is an object's event sequence counter as a record: a kept
// count's stored form (Service.Counts), one row written by one unit of
// work at a time.
type sequence struct {
	codec barrier.CountCodec
	n     int64
}

func (r *sequence) AppendRecord(b []byte, k barrier.Key) ([]byte, error) {
	return append(b, r.codec.EncodeCount(k, r.n)...), nil
}

func (r *sequence) DecodeRecord(k barrier.Key, b []byte) error {
	n, err := r.codec.DecodeCount(k, b)
	if err != nil {
		r.n = 0
		return err
	}
	r.n = n
	return nil
}
