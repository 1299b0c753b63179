package tokenvault

import (
	"context"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

// Appended audit lines.
//
// A read of a token writes only its audit line (and the line's index and
// export queue entries, all new keys: appendRecord and appendIndex in
// txn.go). On a store that can append (store.Appender:
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
// the generation before it moved (finish): so once DeleteTenant has
// marked a tenant, no line of it can be appended, and its deletion,
// folding first, leaves none behind.

// appendPath is the Vault's side of appending: the store, when it
// appends, and the gate between appends and writes that change
// authentication.
type appendPath struct {
	store store.Appender // nil: every call commits its writes
	// gate is held shared by an append from its generation check until
	// Append returns, and taken alone (briefly) after an authentication
	// change commits.
	gate sync.RWMutex
}

// onlyAppended reports whether t wrote, and wrote nothing but new audit
// entries.
func (t *txn) onlyAppended() bool { return t.appended > 0 && t.rewrites == 0 && len(t.counts) == 0 }

// tryAppend appends the writes of first, an optimistic first run that
// only appended, when the store can and no authentication change began
// since gen. It reports whether it did; when not (or when Append failed:
// the write transaction then writes the same entries), the caller commits
// as usual.
func (v *Vault) tryAppend(ctx context.Context, first *txn, snap *snapshotTx, gen uint64) bool {
	ap := v.appends.store
	if ap == nil || !first.onlyAppended() {
		return false
	}
	v.appends.gate.RLock()
	defer v.appends.gate.RUnlock()
	if v.auth.gen.Load() != gen {
		return false
	}
	entries := make([]store.Entry, 0, len(snap.writes))
	for k, val := range snap.writes {
		entries = append(entries, store.Entry{Key: []byte(k), Value: val})
	}
	return ap.Append(ctx, entries) == nil
}

// appendsSettled returns once every append that checked the auth
// generation before it last moved has returned (see above).
func (v *Vault) appendsSettled() {
	if v.appends.store == nil {
		return
	}
	v.appends.gate.Lock()
	v.appends.gate.Unlock() // an empty critical section: a barrier
}

// foldAppends makes every audit entry appended so far visible to the
// transactions that follow (store.Appender.Fold).
func (v *Vault) foldAppends(ctx context.Context) error {
	if v.appends.store == nil {
		return nil
	}
	if err := v.appends.store.Fold(ctx); err != nil {
		return v.result(err)
	}
	return nil
}
