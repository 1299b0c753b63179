package auditlog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// holdLeaseAs writes the lease name as held by instance holder in epoch,
// until until: another instance, as far as v can tell.
func holdLeaseAs(t *testing.T, v *tokenvault.Vault, name, holder string, epoch uint64, until time.Time) {
	t.Helper()
	err := testseam.Of(v).Work.Update(context.Background(), func(tx *unit.Tx) error {
		return tx.PutRecord(barrier.Lease(name), &lease.Record{Holder: holder, Epoch: epoch, Expires: until})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// chainState reads tenant tid's head (ok false: none) and counts its
// lines queued for the linker.
func chainState(t *testing.T, v *tokenvault.Vault, tid string) (h auditlog.Head, ok bool, queued int) {
	t.Helper()
	err := testseam.Of(v).Work.View(context.Background(), func(tx *unit.Tx) error {
		var err error
		if ok, err = tx.GetRecord(barrier.Tenant(tid).ChainHead(), &h); err != nil {
			return err
		}
		return tx.ScanKeys(barrier.ChainQueue, func(_ barrier.Key, rest string) error {
			if _, r, _ := strings.Cut(rest, "/"); strings.HasPrefix(r, tid+"/") {
				queued++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, ok, queued
}

// TestCommitWritesNothingOfTheChain: while another instance holds the
// linker lease (and links nothing), calls commit, list their lines and
// verify without waiting for it: their commits wrote no head and no link,
// only a queue entry per line, and verification reports the lines apart
// as not yet covered. Once the lease expires this Vault's linker takes it
// and links every line, and the chain verifies whole.
func TestCommitWritesNothingOfTheChain(t *testing.T) {
	clock := vaulttest.NewClock()
	v := openChecked(t, memory.New(), clock, tokenvault.AuditChainOptions{LinkerLease: 10 * time.Second}, nil)
	in := testseam.Of(v)
	holdLeaseAs(t, v, lease.Linker, "0000000000000001", 7, clock.Now().Add(time.Hour))
	// The linker may have taken the lease before: it finds it lost.
	in.LinkLease().Forget(in.LinkLease().Held())

	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	for i := range 5 {
		if _, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "app" + string(rune('a'+i)), Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Fatal(err)
		}
	}
	// A second or so of linker ticks: none links.
	time.Sleep(4 * auditlog.ChainInterval)
	h, ok, queued := chainState(t, v, tid)
	if ok {
		t.Fatalf("a head was written (seq %d) while another instance held the linker lease", h.Seq)
	}
	page, err := v.ListLogs(ctx, boot.Application.Key, tokenvault.ListLogsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if queued == 0 || len(page.Data) != queued {
		t.Fatalf("%d lines listed, %d queued; want every line listed and queued", len(page.Data), queued)
	}
	r, err := v.VerifyAuditChain(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	if r.Unlinked != queued || r.Lines != 0 || len(r.Problems) != 0 {
		t.Fatalf("verify while unlinked: %d unlinked, %d lines, problems %v; want %d unlinked and nothing else", r.Unlinked, r.Lines, r.Problems, queued)
	}

	clock.Advance(2 * time.Hour) // the other instance's lease expires
	deadline := time.Now().Add(30 * time.Second)
	for ; queued > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, _, queued = chainState(t, v, tid)
	}
	if queued > 0 {
		t.Fatalf("%d lines still queued 30 s after the lease expired", queued)
	}
	if r, err = v.VerifyAuditChain(ctx, tid); err != nil {
		t.Fatal(err)
	}
	if r.Unlinked != 0 || r.Lines != len(page.Data) {
		t.Fatalf("after the takeover: %d lines verified, %d unlinked; want %d and 0", r.Lines, r.Unlinked, len(page.Data))
	}
	for _, p := range r.Problems {
		if p.Kind != "unsigned_tail" {
			t.Errorf("problem after the takeover: %v", p)
		}
	}
	if e := in.LinkLease().Held(); e != 8 {
		t.Errorf("the linker holds epoch %d, want 8 (the next after the other instance's 7)", e)
	}
}

// TestLeaseEpochs: a lease goes to one instance at a time; another takes
// it only once it expires, in the next epoch, and the first, paused past
// its expiry, finds in its next transaction that it lost it and links
// nothing; a released lease is taken at once.
func TestLeaseEpochs(t *testing.T) {
	clock := vaulttest.NewClock()
	s := memory.New()
	a := testseam.Of(openChecked(t, s, clock, tokenvault.AuditChainOptions{LinkerLease: time.Minute}, nil))
	b := testseam.Of(openChecked(t, s, clock, tokenvault.AuditChainOptions{LinkerLease: time.Minute}, nil))
	la := lease.New(lease.Config{Name: "test", TTL: time.Minute, Instance: a.Instance, Work: a.Work, Now: a.Now})
	lb := lease.New(lease.Config{Name: "test", TTL: time.Minute, Instance: b.Instance, Work: b.Work, Now: b.Now})

	ea, ok, err := la.Hold(ctx)
	if err != nil || !ok || ea != 1 {
		t.Fatalf("first hold = %d, %v, %v; want epoch 1", ea, ok, err)
	}
	if _, ok, err := lb.Hold(ctx); err != nil || ok {
		t.Fatalf("second instance's hold of a held lease = %v, %v; want refused", ok, err)
	}
	clock.Advance(30 * time.Second)
	if e, ok, err := la.Hold(ctx); err != nil || !ok || e != ea {
		t.Fatalf("renewal = %d, %v, %v; want epoch %d again", e, ok, err, ea)
	}
	clock.Advance(61 * time.Second) // a is "paused" past its expiry
	eb, ok, err := lb.Hold(ctx)
	if err != nil || !ok || eb != ea+1 {
		t.Fatalf("takeover after expiry = %d, %v, %v; want epoch %d", eb, ok, err, ea+1)
	}
	err = a.Work.Update(ctx, func(tx *unit.Tx) error { return lease.Check(tx, "test", a.Instance, ea) })
	if err == nil {
		t.Fatal("the paused holder's transaction went on under a lease another instance took")
	}
	if err = b.Work.Update(ctx, func(tx *unit.Tx) error { return lease.Check(tx, "test", b.Instance, eb) }); err != nil {
		t.Fatalf("the new holder's transaction: %v", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	la.Forget(ea)
	if e, ok, err := la.Hold(ctx); err != nil || !ok || e != eb+1 {
		t.Fatalf("hold after release = %d, %v, %v; want epoch %d at once", e, ok, err, eb+1)
	}
}

// TestLinkerStopsOnALostLease: a linking pass in an epoch this instance
// no longer holds links nothing (no fork: the new holder extends the
// chain alone).
func TestLinkerStopsOnALostLease(t *testing.T) {
	clock := vaulttest.NewClock()
	v := openChecked(t, memory.New(), clock, tokenvault.AuditChainOptions{}, nil)
	in := testseam.Of(v)
	holdLeaseAs(t, v, lease.Linker, "0000000000000001", 3, clock.Now().Add(time.Hour))
	in.LinkLease().Forget(in.LinkLease().Held())
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Linker.LinkQueued(ctx, 2); err != nil {
		t.Fatalf("a pass under a lost lease: %v; want it to stop quietly", err)
	}
	if _, ok, queued := chainState(t, v, boot.Tenant.ID); ok || queued == 0 {
		t.Fatalf("a pass under a lost lease linked: head %v, %d queued", ok, queued)
	}
}
