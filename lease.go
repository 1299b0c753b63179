package tokenvault

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Background leases.
//
// Some background work is done by one instance at a time among those
// sharing a store: linking the audit chain (chain_linker.go), sweeping
// (sweeper.go). Done by every instance at once it would only conflict
// with itself: two linkers extending one chain, two sweepers removing the
// same schedule entries. A lease says which instance does it: a row
// sys/lease/<name> (leaseRecord) naming its holder (the instance id), an
// epoch and an expiry. An instance takes a lease that is free, released,
// or expired, with the next epoch; its holder renews it well before it
// expires (hold, when less than two thirds of its time is left), and
// releases it when the Vault closes, so that another instance takes over
// at once rather than at the expiry.
//
// Holding is checked where it matters, in the transaction that does the
// work (checkLease): a holder paused past its expiry (a long GC, SIGSTOP)
// while another took the lease finds, in its next transaction, that the
// row names another holder or epoch, and stops before writing anything.
// The expiry is on the Vault's clock (Options.Now); instances whose
// clocks disagree by more than a fraction of the lease's time may hold it
// at once for that long, which costs conflicts (retried by the store)
// and never a wrong result: the work a lease guards is transactional
// either way.
//
// The lease rows are written by background work only, and no call reads
// one.

// DefaultLeaseTTL is how long a background lease holds without renewal,
// when AuditChainOptions.LinkerLease is zero.
const DefaultLeaseTTL = 10 * time.Second

// Lease names.
const (
	leaseLinker  = "chain-linker"
	leaseSweeper = "sweeper"
)

// errLeaseLost is returned by a transaction that found its instance no
// longer holds the lease it works under: a Conflict, which the Vault does
// not log as an internal error (the work goes on at its new holder).
var errLeaseLost = &Error{Kind: Conflict, Message: "background lease lost", Err: leaseLost}

// leaseLost is what errors.Is finds in errLeaseLost.
var leaseLost = errors.New("tokenvault: background lease lost")

// lease is one instance's side of a background lease.
type lease struct {
	name string
	ttl  time.Duration

	mu sync.Mutex
	// epoch is the epoch held, 0 when not held; until its expiry as
	// last written.
	epoch uint64
	until time.Time
}

// hold renews l when held and due for renewal, or takes it when free,
// released or expired, and returns the epoch held; ok is false when
// another instance holds it. Returns the store's errors.
func (l *lease) hold(ctx context.Context, v *Vault) (epoch uint64, ok bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != 0 && v.now().Before(l.until.Add(-l.ttl*2/3)) {
		return l.epoch, true, nil
	}
	if l.epoch == 0 {
		// Held by another, as a read transaction sees it: no write
		// transaction (which on PostgreSQL would take part in the
		// holder's conflicts) for an instance that only waits.
		var other bool
		if err := v.view(ctx, func(t *txn) error {
			var rec leaseRecord
			found, err := t.GetRecord(barrier.Lease(l.name), &rec)
			other = found && rec.Holder != t.v.instance && t.Now.Before(rec.Expires)
			return err
		}); err != nil || other {
			return 0, false, err
		}
	}
	var rec leaseRecord
	err = v.update(ctx, func(t *txn) error {
		ok = false
		rec = leaseRecord{}
		found, err := t.GetRecord(barrier.Lease(l.name), &rec)
		if err != nil {
			return err
		}
		switch {
		case found && l.epoch != 0 && rec.Holder == t.v.instance && rec.Epoch == l.epoch:
			// Ours, and nobody took it since: renewed, in the same epoch.
		case !found || !t.Now.Before(rec.Expires):
			rec.Epoch++
		default:
			return nil
		}
		rec.Holder, rec.Expires, ok = t.v.instance, t.Now.Add(l.ttl), true
		return t.PutRecord(barrier.Lease(l.name), &rec)
	})
	if err != nil || !ok {
		l.epoch = 0
		return 0, false, err
	}
	l.epoch, l.until = rec.Epoch, rec.Expires
	return l.epoch, true, nil
}

// held reports the epoch l is held in as this instance last knew it (0:
// not held), without reading the store.
func (l *lease) held() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// lost forgets a hold that a transaction found gone (errLeaseLost).
func (l *lease) lost(epoch uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == epoch {
		l.epoch = 0
	}
}

// release gives l up, if still held, so that another instance takes it
// at once. Errors are the store's; a release that fails leaves the lease
// to expire.
func (l *lease) release(ctx context.Context, v *Vault) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == 0 {
		return nil
	}
	epoch := l.epoch
	l.epoch = 0
	return v.update(ctx, func(t *txn) error {
		var rec leaseRecord
		found, err := t.GetRecord(barrier.Lease(l.name), &rec)
		if err != nil || !found || rec.Holder != t.v.instance || rec.Epoch != epoch {
			return err
		}
		rec.Expires = time.Time{}
		return t.PutRecord(barrier.Lease(l.name), &rec)
	})
}

// checkLease returns errLeaseLost unless this instance holds the lease
// name in epoch, unexpired, as t reads it: the first thing a transaction
// working under a lease does, so that on every store it commits only
// while the lease holds (on PostgreSQL, an instance taking the lease
// meanwhile conflicts with it).
func (t *txn) checkLease(name string, epoch uint64) error {
	var rec leaseRecord
	found, err := t.GetRecord(barrier.Lease(name), &rec)
	if err != nil {
		return err
	}
	if !found || rec.Holder != t.v.instance || rec.Epoch != epoch || !t.Now.Before(rec.Expires) {
		return errLeaseLost
	}
	return nil
}

// releaseOnClose releases l with a short deadline of its own: the Vault's
// background context is cancelled by then.
func (l *lease) releaseOnClose(v *Vault) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.release(ctx, v); err != nil {
		v.logger.Warn("tokenvault: releasing a background lease failed; it expires", "lease", l.name, "err", err)
	}
}
