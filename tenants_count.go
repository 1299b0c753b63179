package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/tenants"
)

// The count of tenants, total_items of ListTenants, is kept by the commits
// that create and delete tenants (tenants.Registered; see the package's
// count.go). Every Vault sharing a store (PostgreSQL) must be of a version
// that keeps it, as for the token list counts (listing.Lists.Build).

// countTenants writes the count of tenants of a store that has none: one
// transaction that counts the registry, once. A store that has it costs
// one read.
func (v *Vault) countTenants(ctx context.Context) error {
	counted := false
	err := v.view(ctx, func(t *txn) error {
		var err error
		counted, err = tenants.Counted(t.Tx)
		return err
	})
	if err != nil || counted {
		return err
	}
	return v.update(ctx, func(t *txn) error { return tenants.Count(t.Tx) })
}
