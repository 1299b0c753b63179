package auditlog_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// recordingSink keeps what it is given, by line id.
type recordingSink struct {
	mu  sync.Mutex
	got map[string]tokenvault.AuditEvent
}

func (s *recordingSink) Name() string { return "rec" }

func (s *recordingSink) Deliver(_ context.Context, events []tokenvault.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		s.got[ev.ID] = ev
	}
	return nil
}

func (s *recordingSink) event(id string) (tokenvault.AuditEvent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.got[id]
	return ev, ok
}

// TestExportWaitsForTheLink: a line the exporter reads before it is
// chained (an append the linker has not reached: another instance's,
// folded after this pass's fold) keeps its queue entry and is not
// delivered; once chained it leaves with its link. A line from before the
// chain began (no link, no chain queue entry) is delivered as it is.
func TestExportWaitsForTheLink(t *testing.T) {
	sink := &recordingSink{got: map[string]tokenvault.AuditEvent{}}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: make([]byte, 32)},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1},
		AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{sink}, Interval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	in := testseam.Of(v)
	// Another instance holds the linker lease and links nothing until it
	// is released, below.
	holdLeaseAs(t, v, lease.Linker, "0000000000000001", 5, in.Now().Add(time.Hour))
	in.LinkLease().Forget(in.LinkLease().Held())
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Late"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	now := in.Now()
	appended := barrier.TimeKey(now) + "/" + uuid.NewString()
	old := barrier.TimeKey(now.Add(-time.Hour)) + "/" + uuid.NewString()
	if err := in.Work.Update(ctx, func(t *unit.Tx) error {
		for _, suffix := range []string{appended, old} {
			rec := auditlog.LineRecord{Line: auditchain.Line{ActorType: "system", EntityType: unit.EntityTenant, EntityID: tid, Operation: "read", Message: "Tenant read", CreatedAt: now}}
			if err := t.PutRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec); err != nil {
				return err
			}
			if err := in.Exporter.Queue(t, tid, suffix); err != nil {
				return err
			}
		}
		// Only the appended one waits for the linker.
		return t.PutIndex(barrier.Tenant(tid).ChainQueueEntry(appended))
	}); err != nil {
		t.Fatal(err)
	}
	name := sink.Name()
	for range 2 {
		if _, err := in.Exporter.Pass(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if ev, ok := sink.event(unit.KeyID(appended)); ok {
		t.Fatalf("a line not chained yet was exported: %+v", ev)
	}
	if ev, ok := sink.event(unit.KeyID(old)); !ok || ev.Seq != 0 || ev.Hash != nil {
		t.Errorf("the line from before the chain: %+v, %v; want it exported without a link", ev, ok)
	}
	var queued bool
	if err := in.Work.View(ctx, func(t *unit.Tx) error {
		queued, err = t.Has(barrier.Tenant(tid).AuditQueueEntry(name, appended))
		return err
	}); err != nil || !queued {
		t.Fatalf("the waiting line's queue entry: %v, %v", queued, err)
	}

	holdLeaseAs(t, v, lease.Linker, "0000000000000001", 5, time.Time{}) // released
	if err := in.Linker.LinkNow(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Exporter.Pass(ctx, name); err != nil {
		t.Fatal(err)
	}
	ev, ok := sink.event(unit.KeyID(appended))
	if !ok || ev.Seq == 0 || ev.PrevHash == nil || ev.Hash == nil {
		t.Fatalf("after the link the line is %+v, %v; want it exported with its link", ev, ok)
	}
	// The exporter's own goroutine may have delivered it too (at least
	// once): either way the queue ends empty.
	if err := in.Work.View(ctx, func(t *unit.Tx) error {
		queued, err = t.Has(barrier.Tenant(tid).AuditQueueEntry(name, appended))
		return err
	}); err != nil || queued {
		t.Fatalf("the delivered line's queue entry: %v, %v", queued, err)
	}
}
