package barrier

import (
	"context"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

// Appended audit lines (the root's appends.go says when a call appends).
//
// An optimistic first run that wrote nothing but new audit entries
// (SealAppend, AppendIndex) may reach a store that can append
// (store.Appender: bbolt's append log) as an append instead of a write
// transaction. The store syncs them before Append returns. Appended
// entries are in the store's file only once folded (FoldAppends), so
// whatever reads or removes audit lines folds first. A write that changes
// what a key authenticates as waits, after its commit, for the appends
// that checked the generation before it moved (AppendsSettled).

// appendPath is the barrier's side of appending: the store, when it
// appends, and the gate between appends and writes that change
// authentication.
type appendPath struct {
	store store.Appender // nil: every call commits its writes
	// gate is held shared by an append from its check until Append
	// returns, and taken alone (briefly) after an authentication change
	// commits.
	gate sync.RWMutex
}

// Appends reports whether the store takes appends: a store one process
// holds that can append.
func (b *Barrier) Appends() bool { return b.appends.store != nil }

// OnlyAppended reports whether t wrote, and wrote nothing but new audit
// entries.
func (t *Tx) OnlyAppended() bool { return t.appended > 0 && t.rewrites == 0 && len(t.counts) == 0 }

// TryAppend appends the writes of first, an optimistic first run
// (ViewSnapshot) that only appended, when the store can and still()
// reports, under the gate, that nothing changed authentication since the
// run began. It reports whether it did; when not (or when Append failed:
// the write transaction then writes the same entries), the caller
// commits as usual. Once appended, the keyrings first read join the
// cache.
func (first *Tx) TryAppend(ctx context.Context, still func() bool) bool {
	b := first.b
	ap := b.appends.store
	snap := first.snap
	if ap == nil || snap == nil || !first.OnlyAppended() {
		return false
	}
	b.appends.gate.RLock()
	defer b.appends.gate.RUnlock()
	if !still() {
		return false
	}
	entries := make([]store.Entry, 0, len(snap.writes))
	for k, val := range snap.writes {
		entries = append(entries, store.Entry{Key: []byte(k), Value: val})
	}
	if ap.Append(ctx, entries) != nil {
		return false
	}
	b.cacheRead(first)
	return true
}

// AppendsSettled returns once every append that checked the auth
// generation before it last moved has returned.
func (b *Barrier) AppendsSettled() {
	if b.appends.store == nil {
		return
	}
	b.appends.gate.Lock()
	b.appends.gate.Unlock() // an empty critical section: a barrier
}

// FoldAppends makes every audit entry appended so far visible to the
// transactions that follow (store.Appender.Fold).
func (b *Barrier) FoldAppends(ctx context.Context) error {
	if b.appends.store == nil {
		return nil
	}
	return b.appends.store.Fold(ctx)
}
