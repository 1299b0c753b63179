package access

import "github.com/tokenvault/tokenvault/internal/unit"

// Which generation a transaction may serve and keep entries under.
//
// The cache keeps the spec's promise that a regenerated, deleted or
// expired key is refused at once, by every Vault on the store: each entry
// carries the generation under which it was read, and is served only in a
// transaction that sees the same generation, so no entry outlives a
// change to what it was read from. Every transaction that writes an API
// key lookup, an application or a session (or marks a tenant deleted) is
// marked auth-changed: their key constructors mark it (internal/barrier),
// so no key is parsed to tell. A transaction that changes a webhook marks
// itself too (events.Forget): the Vault caches each tenant's webhook
// subscriptions under the same generation (internal/events), so a webhook
// change voids the key entries as well, and a key change the
// subscriptions; both are rare beside the calls the caches serve. The
// generation is kept in one of two ways:
//
//   - On a store that several processes share and that keeps a generation
//     counter for them (store.Generation, PostgreSQL), the counter is the
//     store's. A transaction that changed a key advances it in its own
//     commit (AdvanceGeneration), and every transaction reads it as of
//     its snapshot, in the round trip that opens it. An entry is stored
//     under the generation of the transaction that read the principal and
//     served only to a transaction reading the same one. So once the call
//     that revoked a key has returned, every Vault's next transaction
//     reads a newer generation and misses. A transaction that has advanced
//     the counter (or shares its database transaction with an Update that
//     has) neither serves nor stores entries: what it reads is not
//     committed yet. Other changes a store makes do not touch the counter,
//     so the cache survives the traffic of tokens and logs; the price is a
//     read of one row per transaction, sent with BEGIN.
//   - On a store that one process holds exclusively (store.SingleProcess:
//     memory, and bbolt, whose file is locked by its opener; the cache's
//     SingleProcess), the counter is the cache's own (Generation), in
//     memory. After a transaction that changed a key commits, it moves on
//     (Invalidate); an entry is stored with the generation read before
//     its transaction began (bbolt takes a read snapshot when View
//     begins, before any of the Vault's code runs, so a generation read
//     later could postdate the snapshot and bless a key revoked in
//     between), and served while it has not moved.
//
// On other stores (shared, without a counter) there is no cache: every
// call reads its key from the store.

// Gens returns the generation an entry must carry to be served in t, and
// the one under which a principal t reads is kept; ok is false when t may
// not use the cache.
func (c *AuthCache[P]) Gens(t *unit.Tx) (serve, keep uint64, ok bool, err error) {
	if gen, advanced, shared, err := t.SharedGeneration(); shared {
		if err != nil || advanced {
			return 0, 0, false, err
		}
		return gen, gen, true, nil
	}
	if !c.SingleProcess() {
		return 0, 0, false, nil
	}
	return c.Generation(), t.AuthGen, true, nil
}

// AdvanceGeneration advances the store's generation in t's own commit
// when t changed what a key authenticates as, on a store that keeps one:
// the Vault calls it after a transaction's function has succeeded.
func AdvanceGeneration(t *unit.Tx) error {
	if !t.AuthChanged() {
		return nil
	}
	return t.AdvanceSharedGeneration()
}
