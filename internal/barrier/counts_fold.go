package barrier

import (
	"context"
	"strings"
	"time"
)

// Folding delta rows (see "Kept counts" in doc.go).
//
// A fold is a write transaction over one batch of counts that moves delta
// rows out of the way of reads: on a store one process holds, every delta
// row of the count into its base row; on a shared store, this instance's
// rows into one row of its own (which no other instance writes, so live
// instances' folders never meet), and the rows older than StaleAfter
// (of an instance that is gone, or of a count it no longer changes) into
// the base row. Calls never read what a fold writes (they only insert
// delta rows with keys of their own), so a fold conflicts with no call;
// two folders meeting on one base row (stale rows) conflict with each
// other, and the store runs one again.

// StaleAfter is how old (by the clock of the Vault that wrote it) a delta
// row of another instance is when, on a shared store, any instance folds
// it into its count's base row.
const StaleAfter = 10 * time.Minute

// foldBatch is how many counts one fold transaction takes.
const foldBatch = 32

// FoldWake has a value when a count of this instance has enough delta
// rows (foldAfterRows) that it should be folded before the next tick.
func (b *Barrier) FoldWake() <-chan struct{} { return b.fold.wake }

// FoldOwn folds the delta rows of the counts this instance wrote rows of
// since it last folded them, in transactions of foldBatch counts, and
// returns how many counts it changed. A failed batch is kept for the next
// fold. It returns the store's errors.
func (b *Barrier) FoldOwn(ctx context.Context) (int, error) {
	keys := b.fold.take()
	n, err := b.foldCounts(ctx, keys)
	if err != nil {
		b.fold.putBack(keys)
	}
	return n, err
}

// FoldStale finds every count with delta rows that any instance may fold
// (on a store one process holds, every delta row; on a shared store, the
// rows older than StaleAfter), by scanning the
// counts of the system and of every tenant, and folds them: what a Vault
// that stopped without folding left behind. It returns how many counts it
// changed, and the store's errors.
func (b *Barrier) FoldStale(ctx context.Context) (int, error) {
	var keys []Key
	err := b.View(ctx, func(t *Tx) error {
		before := TimeKey(b.now().Add(-StaleAfter))
		var err error
		keys, err = t.foldable(Prefix{s: "sys/count/"}, before)
		if err != nil {
			return err
		}
		var tenants []string
		err = t.ScanKeys(TenantRegistry, func(_ Key, tid string) error {
			tenants = append(tenants, tid)
			return nil
		})
		for _, tid := range tenants {
			if err != nil {
				break
			}
			var ks []Key
			ks, err = t.foldable(Tenant(tid).Records(kindCount), before)
			keys = append(keys, ks...)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	return b.foldCounts(ctx, keys)
}

// foldable is the counts under p with delta rows any instance may fold
// into the base row: stamped before before, or any on a store one
// process holds.
func (t *Tx) foldable(p Prefix, before string) ([]Key, error) {
	var keys []Key
	last := ""
	err := t.tx.Scan([]byte(p.s), nil, 0, func(k, _ []byte) error {
		s := string(k)
		i := strings.Index(s[len(p.s):], deltaSep)
		if i < 0 {
			return nil
		}
		base := s[:len(p.s)+i]
		if base == last {
			return nil
		}
		_, stamp, _ := strings.Cut(s[len(base)+len(deltaSep):], "/")
		if t.b.single || stamp < before {
			last = base
			keys = append(keys, Key{s: base, tenant: p.tenant})
		}
		return nil
	})
	return keys, err
}

// foldCounts folds keys, foldBatch to a transaction.
func (b *Barrier) foldCounts(ctx context.Context, keys []Key) (int, error) {
	changed := 0
	for len(keys) > 0 {
		batch := keys[:min(len(keys), foldBatch)]
		keys = keys[len(batch):]
		n := 0
		err := b.Update(ctx, func(t *Tx) error {
			n = 0
			before := TimeKey(t.now.Add(-StaleAfter))
			for _, k := range batch {
				ok, err := t.foldCount(k, before)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return changed, err
		}
		changed += n
	}
	return changed, nil
}

// foldCount folds the delta rows of the count at k that this instance
// may fold (see the top of this file), and reports whether it changed
// anything. A count of a tenant no longer registered (being deleted) is
// left alone: its deletion removes it, and a base row written behind the
// deletion's cursor would outlive the tenant.
func (t *Tx) foldCount(k Key, before string) (bool, error) {
	if k.tenant != "" {
		if ok, err := t.Has(TenantRegistry.Key(k.tenant)); err != nil || !ok {
			return false, err
		}
	}
	raw, rows, err := t.countRows(k)
	if err != nil {
		return false, err
	}
	var toBase, toOwn []deltaRow
	for _, r := range rows {
		switch {
		case t.b.single || r.stamp < before:
			toBase = append(toBase, r)
		case r.instance == t.b.instance:
			toOwn = append(toOwn, r)
		}
	}
	if len(toOwn) < 2 {
		toOwn = nil // one row of its own is as folded as it gets
	}
	if len(toBase) == 0 && len(toOwn) == 0 {
		return false, nil
	}
	if len(toBase) > 0 {
		// The base may go below zero while rows not folded yet hold
		// the matching increments: only the sum is a count.
		var base int64
		if raw != nil {
			if base, err = t.openCount(k, raw); err != nil {
				return false, err
			}
		}
		d, err := t.sumRows(k, toBase)
		if err != nil {
			return false, err
		}
		if err := t.deleteRows(toBase); err != nil {
			return false, err
		}
		if err := t.SealPut(k, t.b.counts.EncodeCount(k, base+d)); err != nil {
			return false, err
		}
	}
	if len(toOwn) > 0 {
		d, err := t.sumRows(k, toOwn)
		if err != nil {
			return false, err
		}
		if err := t.deleteRows(toOwn); err != nil {
			return false, err
		}
		if d != 0 {
			dk := t.b.deltaKey(k)
			sealed, err := t.seal(dk, t.b.counts.EncodeCount(dk, d))
			if err != nil {
				return false, err
			}
			if err := t.put(dk, sealed); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// deleteRows deletes delta rows.
func (t *Tx) deleteRows(rows []deltaRow) error {
	for _, r := range rows {
		t.rewrites++
		if err := t.tx.Delete([]byte(r.key)); err != nil {
			return err
		}
	}
	return nil
}
