package vaulttest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// sweepCounter is a tokenvault.Metrics that counts the runs of Sweep and
// ignores the rest.
type sweepCounter struct{ runs atomic.Int64 }

func (*sweepCounter) Tokens(tokenvault.TokenOp, int)                                     {}
func (*sweepCounter) CodeRun(tokenvault.CodeKind, tokenvault.CodeOutcome, time.Duration) {}
func (*sweepCounter) WebhookDelivered(tokenvault.WebhookOutcome, int)                    {}
func (*sweepCounter) Swept(tokenvault.SweepKind, int)                                    {}
func (c *sweepCounter) SweepDone(time.Duration, error)                                   { c.runs.Add(1) }
func (*sweepCounter) StoreCommit(int, time.Duration)                                     {}
func (*sweepCounter) AuditExported(string, int, error)                                   {}
func (*sweepCounter) EventDelivery(tokenvault.EventOutcome, time.Duration)               {}
func (*sweepCounter) WebhookAutoDisabled(string)                                         {}

// TestOneInstanceSweeps: of two Vaults on one store, only the one holding
// the sweeper lease runs the background sweep (two sweeping at once would
// remove the same schedule entries and write the same progress records,
// and conflict); when it closes, releasing the lease, the other takes
// over at its next tick.
func TestOneInstanceSweeps(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	key := vaulttest.NewMasterKey()
	open := func(m *sweepCounter) *tokenvault.Vault {
		v, err := tokenvault.Open(ctx, tokenvault.Options{Store: s, Metrics: m, Keys: tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: 20 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var ma, mb sweepCounter
	a := open(&ma)
	b := open(&mb)
	t.Cleanup(func() { b.Close() })
	// Some sweeps: at least 5 by one of them.
	for deadline := time.Now().Add(30 * time.Second); ma.runs.Load()+mb.runs.Load() < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("in 30 s: %d and %d sweeps", ma.runs.Load(), mb.runs.Load())
		}
	}
	ra, rb := ma.runs.Load(), mb.runs.Load()
	if ra > 0 && rb > 0 {
		t.Fatalf("both instances swept (%d and %d runs): want one at a time", ra, rb)
	}
	holder, other := a, &mb
	if rb > 0 {
		holder, other = b, &ma
	}
	before := other.runs.Load()
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); other.runs.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the other instance did not sweep within 30 s of the holder's Close")
		}
	}
	a.Close()
}
