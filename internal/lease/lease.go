package lease

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// DefaultTTL is how long a background lease holds without renewal, when
// the Vault's AuditChainOptions.LinkerLease is zero.
const DefaultTTL = 10 * time.Second

// Lease names.
const (
	Linker  = "chain-linker"
	Sweeper = "sweeper"
)

// ErrLost is returned by a transaction that found its instance no longer
// holds the lease it works under: a Conflict, which the Vault does not
// log as an internal error (the work goes on at its new holder).
var ErrLost = &unit.Error{Kind: unit.Conflict, Message: "background lease lost", Err: Lost}

// Lost is what errors.Is finds in ErrLost.
var Lost = errors.New("tokenvault: background lease lost")

// Config is one lease of one instance.
type Config struct {
	// Name names the lease (Linker, Sweeper): its row is sys/lease/<name>.
	Name string
	// TTL is how long a hold lasts without renewal.
	TTL time.Duration
	// Instance is this instance's id (the holder a row names).
	Instance string
	// Work runs the lease's transactions.
	Work *unit.Work
	// Now is the Vault's clock.
	Now func() time.Time
}

// Lease is one instance's side of a background lease. It is safe for
// concurrent use.
type Lease struct {
	cfg Config

	mu sync.Mutex
	// epoch is the epoch held, 0 when not held; until its expiry as
	// last written.
	epoch uint64
	until time.Time
}

// New is the lease of cfg, not held.
func New(cfg Config) *Lease { return &Lease{cfg: cfg} }

// Name is the lease's name.
func (l *Lease) Name() string { return l.cfg.Name }

// Hold renews l when held and due for renewal, or takes it when free,
// released or expired, and returns the epoch held; ok is false when
// another instance holds it. Returns the store's errors.
func (l *Lease) Hold(ctx context.Context) (epoch uint64, ok bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch != 0 && l.cfg.Now().Before(l.until.Add(-l.cfg.TTL*2/3)) {
		return l.epoch, true, nil
	}
	if l.epoch == 0 {
		// Held by another, as a read transaction sees it: no write
		// transaction (which on PostgreSQL would take part in the
		// holder's conflicts) for an instance that only waits.
		var other bool
		if err := l.cfg.Work.View(ctx, func(t *unit.Tx) error {
			var rec Record
			found, err := t.GetRecord(barrier.Lease(l.cfg.Name), &rec)
			other = found && rec.Holder != l.cfg.Instance && t.Now.Before(rec.Expires)
			return err
		}); err != nil || other {
			return 0, false, err
		}
	}
	var rec Record
	err = l.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		ok = false
		rec = Record{}
		found, err := t.GetRecord(barrier.Lease(l.cfg.Name), &rec)
		if err != nil {
			return err
		}
		switch {
		case found && l.epoch != 0 && rec.Holder == l.cfg.Instance && rec.Epoch == l.epoch:
			// Ours, and nobody took it since: renewed, in the same epoch.
		case !found || !t.Now.Before(rec.Expires):
			rec.Epoch++
		default:
			return nil
		}
		rec.Holder, rec.Expires, ok = l.cfg.Instance, t.Now.Add(l.cfg.TTL), true
		return t.PutRecord(barrier.Lease(l.cfg.Name), &rec)
	})
	if err != nil || !ok {
		l.epoch = 0
		return 0, false, err
	}
	l.epoch, l.until = rec.Epoch, rec.Expires
	return l.epoch, true, nil
}

// Held reports the epoch l is held in as this instance last knew it (0:
// not held), without reading the store.
func (l *Lease) Held() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// Forget forgets a hold in epoch that a transaction found gone (ErrLost).
func (l *Lease) Forget(epoch uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == epoch {
		l.epoch = 0
	}
}

// Release gives l up, if still held, so that another instance takes it
// at once. Errors are the store's; a release that fails leaves the lease
// to expire.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == 0 {
		return nil
	}
	epoch := l.epoch
	l.epoch = 0
	return l.cfg.Work.Update(ctx, func(t *unit.Tx) error {
		var rec Record
		found, err := t.GetRecord(barrier.Lease(l.cfg.Name), &rec)
		if err != nil || !found || rec.Holder != l.cfg.Instance || rec.Epoch != epoch {
			return err
		}
		rec.Expires = time.Time{}
		return t.PutRecord(barrier.Lease(l.cfg.Name), &rec)
	})
}

// ReleaseOnClose releases l with a short deadline of its own (the Vault's
// background context is cancelled by then), and logs a failure to logger.
func (l *Lease) ReleaseOnClose(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		logger.Warn("tokenvault: releasing a background lease failed; it expires", "lease", l.cfg.Name, "err", err)
	}
}

// Check returns ErrLost unless instance holds the lease name in epoch,
// unexpired, as t reads it: the first thing a transaction working under a
// lease does, so that on every store it commits only while the lease
// holds (on PostgreSQL, an instance taking the lease meanwhile conflicts
// with it).
func Check(t *unit.Tx, name, instance string, epoch uint64) error {
	var rec Record
	found, err := t.GetRecord(barrier.Lease(name), &rec)
	if err != nil {
		return err
	}
	if !found || rec.Holder != instance || rec.Epoch != epoch || !t.Now.Before(rec.Expires) {
		return ErrLost
	}
	return nil
}
