package events

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestRotationKeepsThePrevious: a rotation keeps the secret it replaces
// as the previous one, until now plus SecretOverlap; a second rotation
// within the overlap keeps only the secret it replaces, so the first
// stops signing at once.
func TestRotationKeepsThePrevious(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	w := h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	rec := h.stored(t, p.TenantID, w.ID)
	if rec.Secret != w.Secret || rec.PreviousSecret != "" || !rec.PreviousUntil.IsZero() {
		t.Fatalf("after creation: secret %v, previous %q until %v", rec.Secret == w.Secret, rec.PreviousSecret, rec.PreviousUntil)
	}
	rotate := func() *Subscription {
		t.Helper()
		var out *Subscription
		err := h.work.Update(context.Background(), func(tx *unit.Tx) error {
			var err error
			out, err = h.svc.Rotate(tx, p, w.ID, NewSecret())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	h.work.Advance(10 * time.Minute)
	first := rotate()
	rec = h.stored(t, p.TenantID, w.ID)
	if rec.Secret != first.Secret || rec.PreviousSecret != w.Secret || !rec.PreviousUntil.Equal(h.work.Now().Add(time.Hour)) {
		t.Errorf("after a rotation: new secret kept %v, previous is the old %v, until %v (want %v)",
			rec.Secret == first.Secret, rec.PreviousSecret == w.Secret, rec.PreviousUntil, h.work.Now().Add(time.Hour))
	}
	h.work.Advance(30 * time.Minute)
	second := rotate()
	rec = h.stored(t, p.TenantID, w.ID)
	if rec.Secret != second.Secret || rec.PreviousSecret != first.Secret || !rec.PreviousUntil.Equal(h.work.Now().Add(time.Hour)) {
		t.Errorf("after a rotation within the overlap: previous is the first rotation's %v, until %v",
			rec.PreviousSecret == first.Secret, rec.PreviousUntil)
	}
	if rec.Secret == w.Secret || rec.PreviousSecret == w.Secret {
		t.Error("the creation's secret still signs after two rotations")
	}
}

// TestReplaceReenableClearsFailures: a Replace that enables a webhook the
// Vault disabled clears why and since when it failed; disabling keeps
// none, and a Replace that leaves a failing webhook enabled keeps its
// failing_since (the dispatcher's count of the failure).
func TestReplaceReenableClearsFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	ctx, tid := context.Background(), p.TenantID
	req := Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}}
	w := h.create(t, p, req)
	failing := h.work.Now()
	setState := func(status, reason string) {
		t.Helper()
		err := h.work.Update(ctx, func(tx *unit.Tx) error {
			rec, err := Get(tx, tid, w.ID)
			if err != nil {
				return err
			}
			rec.Status, rec.DisabledReason, rec.FailingSince = status, reason, failing
			return tx.PutRecord(barrier.Tenant(tid).Record(unit.EntityWebhook, w.ID), rec)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	replace := func(req Request) *Subscription {
		t.Helper()
		var out *Subscription
		err := h.work.Update(ctx, func(tx *unit.Tx) error {
			var err error
			out, err = h.svc.Replace(tx, p, w.ID, req)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	setState(Enabled, "")
	replace(req)
	if rec := h.stored(t, tid, w.ID); !rec.FailingSince.Equal(failing) {
		t.Errorf("a Replace of an enabled webhook cleared failing_since: %+v", rec)
	}

	setState(Disabled, DisabledFailing)
	up := replace(req) // status "" is enabled
	rec := h.stored(t, tid, w.ID)
	if up.Status != Enabled || up.DisabledReason != "" || rec.DisabledReason != "" || !rec.FailingSince.IsZero() {
		t.Errorf("re-enabled: %+v, stored reason %q since %v", up, rec.DisabledReason, rec.FailingSince)
	}

	setState(Disabled, DisabledGone)
	disabled := req
	disabled.Status = Disabled
	replace(disabled)
	if rec := h.stored(t, tid, w.ID); rec.DisabledReason != DisabledGone {
		t.Errorf("a Replace that keeps it disabled lost why: %q", rec.DisabledReason)
	}
	setState(Enabled, "")
	replace(disabled)
	if rec := h.stored(t, tid, w.ID); rec.Status != Disabled || rec.DisabledReason != "" {
		t.Errorf("disabled by a caller: status %q reason %q", rec.Status, rec.DisabledReason)
	}
}

// TestCreateRefusesPastTheLimit: a tenant has at most MaxPerTenant
// webhooks: one more is Conflict, until one is deleted; another tenant's
// do not count.
func TestCreateRefusesPastTheLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p, other := h.tenant(t, "t1"), h.tenant(t, "t2")
	limit := h.svc.Dispatch.Options().MaxPerTenant
	req := Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}}
	var first *Subscription
	for i := range limit {
		w := h.create(t, p, req)
		if i == 0 {
			first = w
		}
	}
	h.create(t, other, req)
	ctx := context.Background()
	err := h.work.Update(ctx, func(tx *unit.Tx) error {
		_, err := h.svc.Create(tx, p, req, NewSecret())
		return err
	})
	var e *unit.Error
	if !errors.As(err, &e) || e.Kind != unit.Conflict {
		t.Fatalf("webhook %d: %v, want Conflict", limit+1, err)
	}
	if err := h.work.Update(ctx, func(tx *unit.Tx) error { return h.svc.Delete(tx, p, first.ID) }); err != nil {
		t.Fatal(err)
	}
	h.create(t, p, req)
}

// TestGetIsTheTenants: another tenant's webhook, an unknown id and one
// that is no id at all are NotFound alike.
func TestGetIsTheTenants(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	h.tenant(t, "t2")
	w := h.create(t, p, Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	for _, c := range []struct{ tid, id string }{{"t2", w.ID}, {"t1", h.svc.IDs.Next(h.work.Now())}, {"t1", "../x"}} {
		err := h.work.View(context.Background(), func(tx *unit.Tx) error { _, err := Get(tx, c.tid, c.id); return err })
		var e *unit.Error
		if !errors.As(err, &e) || e.Kind != unit.NotFound {
			t.Errorf("Get(%q, %q) = %v, want NotFound", c.tid, c.id, err)
		}
	}
}
