package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// sweepBatch bounds the work of one sweep transaction.
const sweepBatch = 100

// The background sweeper.
//
// Every Vault runs one, and the one whose instance holds the sweeper lease
// (internal/lease) sweeps: the sweep's transactions remove the same schedule
// entries, write the same progress records (sys/cvcscan, the re-seal
// markers) and prune the same lines whichever instance runs them, so two
// instances sweeping at once would only conflict with each other (on
// PostgreSQL, serialization failures that rerun whole groups). The sweeper
// takes its lease only on the instance that holds the linker lease
// (chain_linker.go): log retention moves the start of each chain and signs
// its anchor checkpoint, writing the heads the linker writes, so the two
// run on one instance and never conflict across instances. The lease
// lasts twice the sweep interval, or AuditChainOptions.LinkerLease if
// longer, and is renewed at every tick: when its holder dies, the instance
// that takes the linker lease sweeps within that time plus an interval. A
// host calling Sweep itself is not held back by the lease; a host that
// runs several instances keeps the background sweeper on in all of them
// (Options.Retention.SweepInterval), or sweeps itself.
//
// What the sweeper writes is background bookkeeping no call reads in a
// write transaction (the lease, the schedule entries it removes, the
// progress records of its scans), besides the objects whose life it ends:
// an expired token is deleted as a DeleteToken would delete it.

func (v *Vault) startSweeper(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	v.stopSweeper = cancel
	v.sweeperDone = make(chan struct{})
	v.sweepLease = lease.New(lease.Config{Name: lease.Sweeper, TTL: max(2*interval, v.chainOpts.LinkerLease), Instance: v.instance, Work: v.work, Now: v.now})
	go func() {
		defer close(v.sweeperDone)
		defer v.sweepLease.ReleaseOnClose(v.logger)
		// A tenant deletion a crash interrupted is finished now, not a
		// whole interval after Open (Sweep finishes them too), by the
		// instance that sweeps.
		if v.holdSweep(ctx) {
			if n, err := v.finishDeletions(ctx); err != nil && ctx.Err() == nil {
				v.logger.Error("tokenvault: finishing tenant deletions failed", "err", err)
			} else if n > 0 {
				v.logger.Info("tokenvault: finished interrupted tenant deletions", "count", n)
			}
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if !v.holdSweep(ctx) {
					continue
				}
				if n, err := v.Sweep(ctx); err != nil && ctx.Err() == nil {
					v.logger.Error("tokenvault: sweep failed", "err", err)
				} else if n > 0 {
					v.logger.Info("tokenvault: swept expired objects", "count", n)
				}
				if n, err := v.Reseal(ctx); err != nil && ctx.Err() == nil {
					v.logger.Error("tokenvault: reseal failed", "err", err)
				} else if n > 0 {
					v.logger.Info("tokenvault: re-sealed records with a rotated data key", "count", n)
				}
			}
		}
	}()
}

// holdSweep takes or renews the sweeper lease, on the instance that holds
// the linker lease only, and reports whether this instance holds it.
func (v *Vault) holdSweep(ctx context.Context) bool {
	_, ok, err := v.linkLease().Hold(ctx)
	if ok {
		_, ok, err = v.sweepLease.Hold(ctx)
	}
	if err != nil && ctx.Err() == nil {
		v.logger.Warn("tokenvault: taking the sweeper lease failed", "err", err)
	}
	return ok
}

// Sweep ends every object whose expiry has passed (it deletes applications,
// tokens, sessions and token intents, and marks invitations EXPIRED), removes card cvcs
// past Options.Retention.CVC and audit log lines older than
// Options.Retention.Logs, finishes tenant deletions left unfinished (see
// [Vault.DeleteTenant]; they are not counted), and returns how many it
// swept. Expired objects are
// already refused before they are swept; sweeping reclaims their space and
// logs their deletion. It also folds the delta rows of the kept counts
// this instance wrote (internal/counts), which the count folder otherwise
// folds once a count has 64 of them: a count written rarely is then one
// row again. The background sweeper calls it every
// Options.Retention.SweepInterval; hosts that disable it call Sweep themselves.
//
// Returns StorageFull or Internal, with the count swept before the failure;
// the next sweep goes on where it stopped.
func (v *Vault) Sweep(ctx context.Context) (swept int, err error) {
	if v.metrics != nil {
		start := time.Now()
		defer func() { v.metrics.SweepDone(time.Since(start), err) }()
	}
	// A deletion that fails must not hold up the rest: its error is
	// returned after the sweep.
	_, delErr := v.finishDeletions(ctx)
	if _, err := v.barrier.FoldOwn(ctx); err != nil {
		return 0, err
	}
	total, err := v.sweepCVCs(ctx) // internal/tokens/cvc.go
	if err != nil {
		return total, err
	}
	for {
		n, more, err := v.sweepOnce(ctx)
		total += n
		if err != nil {
			return total, err
		}
		if !more {
			break
		}
	}
	pruned, err := v.pruneLogs(ctx)
	if err == nil {
		err = delErr
	}
	return total + pruned, err
}

// sweepOnce removes up to sweepBatch expired objects in one transaction,
// each by its feature's handler (expiryKinds), counted for Options.Metrics
// under the handler's SweepKind.
func (v *Vault) sweepOnce(ctx context.Context) (removed int, more bool, err error) {
	return v.work.SweepExpired(ctx, v.expiryKinds, sweepBatch, func(t *unit.Tx, k unit.ExpiryKind) {
		(&txn{Tx: t, v: v}).sweptOne(SweepKind(k.Swept))
	})
}

// gatherExpiryKinds returns, by the kind in their schedule entries, the
// sweeper's handlers of every feature whose objects expire (each one's
// ExpiryKind, unit.ExpiryKind). An application's deletion emits its
// events through the events feature, which imports access, so the
// applications' handler is given the Vault's access.Applications.
func (v *Vault) gatherExpiryKinds() map[string]unit.ExpiryKind {
	kinds := map[string]unit.ExpiryKind{}
	for _, k := range []unit.ExpiryKind{
		access.ExpiryKind(v.apps.Remove), v.tokens.ExpiryKind(), sessions.ExpiryKind,
		idempotency.ExpiryKind, tenants.ExpiryKind, intents.ExpiryKind, approvals.ExpiryKind,
	} {
		kinds[k.Kind] = k
	}
	return kinds
}
