package tenants

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The count of tenants (barrier.SysTenantCount) is what ListTenants
// reports as total_items, without counting the registry
// (sys/tenant/<tid>). The commit that registers a tenant adds 1 and the
// one that takes it out of the registry (the deletion's mark) adds -1,
// through the transaction's kept counts (a delta row per store
// transaction, read by nothing on the commit path, so that two instances
// creating tenants at once do not conflict). A store written before the
// count existed gets it once, at Open (Count).

// Counted reports whether the store holds the count of tenants.
func Counted(t *unit.Tx) (bool, error) { return t.Has(barrier.SysTenantCount) }

// Count writes the count of tenants of a store that has none, by counting
// the registry in t; a store that has it is left as it is. Run it in an
// update, once (the root runs it at Open after Counted in a view said the
// count is missing).
func Count(t *unit.Tx) error {
	if ok, err := Counted(t); err != nil || ok {
		return err
	}
	n := int64(0)
	err := t.ScanKeys(barrier.TenantRegistry, func(barrier.Key, string) error {
		n++
		return nil
	})
	if err != nil {
		return err
	}
	return t.PutCount(barrier.SysTenantCount, n)
}

// EnsureCount gives a store written before the count its count, in units
// of work of w: one view that finds it (what a store that has it costs),
// else one update that counts the registry (Count). The Vault runs it at
// Open. Every Vault sharing a store (PostgreSQL) must be of a version
// that keeps the count, as for the token list counts.
func EnsureCount(ctx context.Context, w *unit.Work) error {
	counted := false
	err := w.View(ctx, func(t *unit.Tx) error {
		var err error
		counted, err = Counted(t)
		return err
	})
	if err != nil || counted {
		return err
	}
	return w.Update(ctx, Count)
}

// Registered changes the count of tenants by delta in t: +1 in the commit
// that registers a tenant, -1 in the one that takes it out of the
// registry.
func Registered(t *unit.Tx, delta int64) { t.AddCount(barrier.SysTenantCount, delta) }
