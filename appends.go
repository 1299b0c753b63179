package tokenvault

import "context"

// Appended audit lines.
//
// A read of a token writes only its audit line (and the line's index and
// export queue entries, all new keys: appendRecord in txn.go and
// barrier.Tx.AppendIndex). On a store that can append (store.Appender:
// bbolt's append log), such a call does not take a write transaction: its
// optimistic first run (optimistic.go) read a consistent snapshot, so its
// answer stands as of that snapshot, and its entries are appended. The
// store syncs them before Append returns, so a read is still never
// answered before its line is durable; a commit of the store's file (page
// writes, two syncs, and the CPU of both) is no longer paid for every
// group of reads. This is only done where the auth cache is (a store one
// process holds), and only when no key changed what it authenticates as
// since the call began (the auth generation, as a first run's apply
// checks it); otherwise the call goes through the write transaction as
// before.
//
// Appended entries are in the store's file only once folded (within a
// fraction of a second on bbolt), so whatever reads or removes audit
// lines and their entries folds first: ListLogs, the log indexer, audit
// export, log retention, re-sealing and tenant deletion (foldAppends); a
// backup's snapshot folds in the store. A write that changes what a key
// authenticates as waits, after its commit, for the appends that checked
// the generation before it moved (the hook newTxn registers, txn.go): so once DeleteTenant has
// marked a tenant, no line of it can be appended, and its deletion,
// folding first, leaves none behind.

// foldAppends makes every audit entry appended so far visible to the
// transactions that follow (barrier.FoldAppends). It links nothing: what
// needs the lines linked too calls linkNow (chain_linker.go). On a store
// that does not append there is nothing to do.
func (v *Vault) foldAppends(ctx context.Context) error {
	if !v.barrier.Appends() {
		return nil
	}
	return v.result(v.barrier.FoldAppends(ctx))
}
