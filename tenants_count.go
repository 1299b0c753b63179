package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The count of tenants.
//
// ListTenants reports how many tenants there are without counting the
// registry (sys/tenant/<tid>): the count at sysTenantCountKey is changed by
// the commit that registers a tenant (CreateTenant, +1) and by the one that
// takes it out of the registry (markDeleting, -1), through the
// transaction's kept counts (barrier.Tx.FlushCounts: a delta row per
// store transaction, read by nothing on the commit path, so that two
// instances creating tenants at once do not conflict). A store written
// before the count existed gets it once, at Open (countTenants). Every
// Vault sharing a store (PostgreSQL) must be of a version that keeps it,
// as for the token list counts (tokens_lists_build.go).

// countTenants writes the count of tenants of a store that has none: one
// transaction that counts the registry, once. A store that has it costs
// one read.
func (v *Vault) countTenants(ctx context.Context) error {
	counted := false
	err := v.view(ctx, func(t *txn) error {
		var err error
		counted, err = t.Has(barrier.SysTenantCount)
		return err
	})
	if err != nil || counted {
		return err
	}
	return v.update(ctx, func(t *txn) error {
		if ok, err := t.Has(barrier.SysTenantCount); err != nil || ok {
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
	})
}
