package tokenvault

import "context"

// LogLinesForTest writes n audit lines to tenant tid, perTxn of them in
// each transaction, the way every line is written (logLine: the line,
// its index entry, its queue entry), then links them (linkNow): a chain of a million lines in
// a thousand commits, where the API would take a million calls.
func (v *Vault) LogLinesForTest(ctx context.Context, tid string, n, perTxn int) error {
	for n > 0 {
		m := min(n, perTxn)
		err := v.update(ctx, func(t *txn) error {
			for range m {
				if err := t.log(actor{ID: tid, Type: "user"}, tid, EntityTenant, tid, OpRead, "Tenant read"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		n -= m
	}
	return v.linkNow(ctx)
}

// LinkNow links, for tests, every queued audit line (chain_linker.go) if
// v's instance holds the linker lease or can take it.
func LinkNow(ctx context.Context, v *Vault) error { return v.linkNow(ctx) }
