package auditlog_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestLogRetentionPrunesLinesOlderThanTheChain: lines written before the
// tenant's chain began (no link, older than the head's since) are pruned
// by time as they always were, beside the chain's prefix; a line without
// a link written after the chain began (one the linker pass has yet to
// link) is not, however old.
func TestLogRetentionPrunesLinesOlderThanTheChain(t *testing.T) {
	var now atomic.Int64
	start := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	now.Store(start.UnixNano())
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: make([]byte, 32)},
		Now:       func() time.Time { return time.Unix(0, now.Load()).UTC() },
		Retention: tokenvault.RetentionOptions{SweepInterval: -1, Logs: 30 * 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Legacy"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	// Three lines from before the chain, and one unlinked line after its
	// start, written as they are stored.
	in := testseam.Of(v)
	var legacy []string
	unlinked := ""
	err = in.Work.Update(ctx, func(tx *unit.Tx) error {
		legacy, unlinked = nil, ""
		for i, at := range []time.Time{start.Add(-10 * 24 * time.Hour), start.Add(-9 * 24 * time.Hour), start.Add(-time.Hour), start.Add(time.Hour)} {
			suffix := barrier.TimeKey(at) + "/" + in.NextID(at)
			l := auditlog.LineRecord{Line: auditchain.Line{ActorID: "a", ActorType: "application", EntityType: tokenvault.EntityApplication, EntityID: "x", Operation: tokenvault.OpCreate, Message: "m", CreatedAt: at}}
			if err := tx.PutRecord(barrier.Tenant(tid).Logs().Key(suffix), &l); err != nil {
				return err
			}
			if i == 3 {
				unlinked = suffix
			} else {
				legacy = append(legacy, suffix)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now.Store(start.Add(31 * 24 * time.Hour).UnixNano())
	if _, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "new", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	err = in.Work.View(ctx, func(tx *unit.Tx) error {
		for _, suffix := range legacy {
			if ok, err := tx.Has(barrier.Tenant(tid).Logs().Key(suffix)); err != nil || ok {
				t.Errorf("line %s from before the chain: still there (%v) past the retention", suffix, err)
			}
		}
		if ok, err := tx.Has(barrier.Tenant(tid).Logs().Key(unlinked)); err != nil || !ok {
			t.Errorf("the unlinked line after the chain's start was pruned (%v)", err)
		}
		var h auditlog.Head
		if _, err := tx.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
			return err
		}
		if h.FirstSeq <= 1 || h.Seq != h.FirstSeq {
			t.Errorf("head %d from %d: want the chain pruned to its last line", h.Seq, h.FirstSeq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
