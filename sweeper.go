package tokenvault

import (
	"context"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// sweepBatch bounds the work of one sweep transaction.
const sweepBatch = 100

func (v *Vault) startSweeper(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	v.stopSweeper = cancel
	v.sweeperDone = make(chan struct{})
	go func() {
		defer close(v.sweeperDone)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if n, err := v.Sweep(ctx); err != nil && ctx.Err() == nil {
					v.logger.Error("tokenvault: sweep failed", "err", err)
				} else if n > 0 {
					v.logger.Info("tokenvault: swept expired objects", "count", n)
				}
			}
		}
	}()
}

// Sweep removes every object whose expiry has passed (applications now; more
// kinds as they land) and returns how many it removed. Expired objects are
// already refused before they are swept; sweeping reclaims their space and
// logs their deletion. The background sweeper calls it every
// Options.SweepInterval; hosts that disable it call Sweep themselves.
func (v *Vault) Sweep(ctx context.Context) (int, error) {
	total := 0
	for {
		n, more, err := v.sweepOnce(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// sweepOnce removes up to sweepBatch expired objects in one transaction.
func (v *Vault) sweepOnce(ctx context.Context) (removed int, more bool, err error) {
	err = v.update(ctx, func(t *txn) error {
		removed, more = 0, false
		now := timeKey(t.now)
		var due []string
		err := t.tx.Scan([]byte(sysExpiryKey), nil, sweepBatch+1, func(k, _ []byte) error {
			rest := string(k[len(sysExpiryKey):])
			if rest > now+"/~" {
				return store.ErrStop
			}
			due = append(due, rest)
			return nil
		})
		if err != nil {
			return err
		}
		if len(due) > sweepBatch {
			due, more = due[:sweepBatch], true
		}
		for _, rest := range due {
			if err := t.delete(sysExpiryKey + rest); err != nil {
				return err
			}
			// rest is <nanos>/<tenant>/<kind>/<id>.
			parts := strings.SplitN(rest, "/", 4)
			if len(parts) != 4 {
				continue
			}
			tid, kind, id := parts[1], parts[2], parts[3]
			switch kind {
			case EntityApplication:
				var rec applicationRecord
				ok, err := t.getRecord(recordKey(tid, kind, id), &rec)
				if err != nil {
					return err
				}
				if ok && rec.expired(t.now) {
					if err := t.deleteApplication(systemActor, &rec, "Application expired"); err != nil {
						return err
					}
					removed++
				}
			case kindToken:
				rec, err := t.loadToken(tid, id, true)
				if err != nil {
					return err
				}
				if rec != nil && rec.expired(t.now) {
					if err := t.deleteToken(systemActor, rec, "Token expired"); err != nil {
						return err
					}
					removed++
				}
			}
		}
		return nil
	})
	return removed, more, err
}
