package events

import (
	"context"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestDeliveriesPageIsByCursor: a list of deliveries takes page 0 or 1
// and a cursor it returned; another page or a cursor that is no id is
// Invalid, naming the field.
func TestDeliveriesPageIsByCursor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		req   paging.Request
		field string // "" when it is accepted
	}{
		{paging.Request{}, ""},
		{paging.Request{Page: 1, Size: 5}, ""},
		{paging.Request{Page: 2}, "page"},
		{paging.Request{Start: paging.EncodeCursor("not an id")}, "start"},
	} {
		pg, err := DeliveriesPage(c.req)
		var e *unit.Error
		switch {
		case c.field == "" && (err != nil || pg.Size < 1 || pg.Size > MaxDeliveriesPageSize):
			t.Errorf("DeliveriesPage(%+v) = %+v, %v; want a page", c.req, pg, err)
		case c.field != "" && (!errors.As(err, &e) || e.Kind != unit.Invalid || len(e.Fields[c.field]) == 0):
			t.Errorf("DeliveriesPage(%+v) = %v, want Invalid on %s", c.req, err, c.field)
		}
	}
}

// TestSendTestThenRedeliver: a test event is queued to an enabled webhook
// only (Conflict when it is disabled) and listed among its deliveries; a
// pending delivery is queued again under UpdatePending, and an unknown
// one is NotFound.
func TestSendTestThenRedeliver(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.tenant(t, "t1")
	ctx := context.Background()
	on := h.create(t, p, Request{Name: "on", URL: "https://hooks.example.com/on", Events: []string{TokenCreated}})
	off := h.create(t, p, Request{Name: "off", URL: "https://hooks.example.com/off", Events: []string{"*"}, Status: Disabled})
	send := func(p *access.Principal, id string) (*DeliveryInfo, error) {
		var out *DeliveryInfo
		err := h.svc.UpdatePending(ctx, func(tx *unit.Tx) error {
			var err error
			out, err = h.svc.SendTest(tx, p, id)
			return err
		})
		return out, err
	}
	d, err := send(p, on.ID)
	if err != nil || d.Status != DeliveryPending || d.EventType != WebhookTest {
		t.Fatalf("SendTest = %+v, %v", d, err)
	}
	var e *unit.Error
	if _, err := send(p, off.ID); !errors.As(err, &e) || e.Kind != unit.Conflict {
		t.Errorf("SendTest to a disabled webhook = %v, want Conflict", err)
	}
	var page *paging.Page[DeliveryInfo]
	err = h.work.View(ctx, func(tx *unit.Tx) error {
		pg, err := DeliveriesPage(paging.Request{})
		if err != nil {
			return err
		}
		page, err = Deliveries(tx, p.TenantID, on.ID, pg)
		return err
	})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != d.ID {
		t.Fatalf("the deliveries of the webhook: %+v, %v", page, err)
	}
	redeliver := func(id string) (*DeliveryInfo, error) {
		var out *DeliveryInfo
		err := h.svc.UpdatePending(ctx, func(tx *unit.Tx) error {
			var err error
			out, err = h.svc.Redeliver(tx, p, on.ID, id)
			return err
		})
		return out, err
	}
	if again, err := redeliver(d.ID); err != nil || again.ID != d.ID || again.Status != DeliveryPending || again.Attempts != 0 {
		t.Errorf("Redeliver = %+v, %v", again, err)
	}
	if _, err := redeliver(h.svc.IDs.Next(h.work.Now())); !errors.As(err, &e) || e.Kind != unit.NotFound {
		t.Errorf("Redeliver of an unknown delivery = %v, want NotFound", err)
	}
}
