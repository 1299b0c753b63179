// Package barrier is the only package that touches the Vault's store
// transactions: everything the root package (tokenvault) reads or writes
// goes through a Barrier and its Tx, which seal values on the way in and
// open them on the way out. The store itself is untrusted.
//
// # What is here, and why
//
//   - The key space (key.go, system.go, tenant.go): Key and Prefix, whose
//     fields are unexported, so a key is built only by this package's
//     constructors and carries what the transaction must know without
//     parsing it (the tenant whose keyring seals it, whether it touches
//     authentication, whether its tenant counts it). The system keys are
//     their own set (system.go); every key that names a tenant is built
//     through that tenant's view, TenantKeys (Tenant(tid).Record(kind, id),
//     .Logs(), .Expiry(...), in the manner of OpenBao's barrier.View), so
//     nothing above passes a tenant id to a free constructor or writes
//     "tenant/" itself. What follows a prefix inside one family (a log
//     line's packed suffix, a token's list position, a record's id) is
//     appended with Prefix.Key and Prefix.Sub by the code that also reads
//     it back (the root's codecs): the view fixes the family and its
//     tenant, the codec its order.
//   - The keyrings (keyring.go): Keys (a keyring and an HMAC index key),
//     wrapped and unwrapped through the Wrapper given at New (the root's
//     KeyWrappers stay in the root, as they are its exported API), and the
//     cache of unwrapped tenant keyrings with its freshness bound
//     (KeyringTTL on a shared store, none on a store one process holds).
//   - The transaction (tx.go): Tx seals with the record's store key as
//     additional data (so ciphertext cannot move between records), reloads
//     a tenant's keyring when a value is sealed with a newer term, and
//     keeps the storage bookkeeping: whether a write touched
//     authentication (OnAuthChange), whether it only appended, and the
//     kept counts, written as delta rows when the store transaction
//     commits (counts.go: AddCount, FlushCounts, ReadCount, PutCount;
//     folded by counts_fold.go; see Kept counts below).
//     Its byte-level API is what the root's records need: GetOpen and Open,
//     SealPut and SealAppend, PutIndex, AppendIndex, Has, Delete, Purge,
//     the scans forward and back, plain markers (GetPlain, PutPlain),
//     wrapped keyrings, the store's shared auth generation, ReadOutside.
//     Encoding and decoding records stays above it (internal/unit's
//     codec.go, each feature's record_*.go), beside the types they
//     encode.
//   - The optimistic snapshot (snapshot.go: ViewSnapshot, Apply) and the
//     append log (appends.go: TryAppend, FoldAppends, AppendsSettled). When
//     to use them (which calls, the auth generation checks) is the root's
//     decision (optimistic.go, appends.go there).
//
// What the barrier needs from the Vault comes in through Config at New:
// the store, the key wrapper, the clock, and the error that says a
// tenant is gone. It imports nothing of the root (an internal package
// cannot), and the root's unit of work (txn) embeds a *Tx.
//
// # How the layering is enforced
//
// The compiler keeps the root off the store: the Vault holds a *Barrier,
// not a store.Store; Tx's store.Tx is an unexported field and no method
// returns it; Key and Prefix have unexported fields, so the root can
// neither reach a store transaction nor build a key by hand. What the
// compiler cannot see, a type assertion of something else to store.Tx or
// store.Generation, or a View or Update called on a store.Store the root
// still names (Options.Store), the root's layering_test.go refuses by
// parsing the root's files. TestStoreIsSealed
// (internal/records/behaviour/records_sealed_test.go) walks a store to hold every value to its keyring.
//
// # Kept counts
//
// A kept count (of tokens by type and container, of counted records, of
// tenants) is the sum of its base row, at its count key, and of its delta
// rows, at <count key>/+/<instance>/<stamp> (the key space below). A
// commit never reads a count and never writes its base row: AddCount
// gathers the transaction's changes, and FlushCounts hands them to the
// write the store does once per store transaction (store.PreCommit),
// which writes one new delta row per count changed, named by the Vault's
// instance (Config.Instance) and a sequence number, so that nothing
// another transaction writes. A group commit of 500 tokenizes of one type
// writes one row for the type's count; two instances writing one tenant
// write different rows. A function that fails takes its changes with it
// (the store drops its part); a whole group run again starts afresh; a
// crash leaves committed rows, which a later read sums as before. The
// rows are in the transaction, so a count is exact as of every snapshot:
// never ahead of the records it counts, never behind.
//
// Reading a count (ReadCount) is one scan of the count's key range: the
// base row and the delta rows, each opened and added up (a sum below zero,
// which only damage can make, reads as zero). Its cost is the backlog of
// delta rows, which the folder keeps small: BenchmarkCountBacklog (the
// root's) measured, with 64 goroutines tokenizing one type (2,000
// tokens, 2 CPUs), at most 64 rows on bbolt (30 on average), 96 on the
// memory store (whose fold waits for the writers' lock; 30 on average),
// 49 on PostgreSQL (24 on average): a read of a count costs about 30
// openings of a small record beside its base row.
//
// Folding (counts_fold.go) moves delta rows out of a read's way, in write
// transactions of up to 32 counts that run beside the calls (internal/counts'
// folder runs them): a count of this instance as soon as it has
// 64 new rows (FoldWake: FoldOwn); and when a Vault opens, and on a
// shared store every minute, the counts of every tenant are scanned for
// rows any instance may fold (FoldStale). Nothing runs on a timer on a
// store one process holds, so it changes only after writes (and a count
// there sums at most 63 rows beyond a fold). On a store one process
// holds, every delta row is folded into the base row. On a shared store,
// an instance folds its own rows into one row of its own, which only it
// writes, so live instances' folders never meet; rows older than StaleAfter (ten
// minutes, by their writer's clock: an instance that is gone, or a count
// it no longer changes) are folded into the base row by any instance.
// Folding never conflicts with calls: a call only inserts delta rows
// under keys nothing else writes, and reads no count, so nothing a call
// reads is written by a fold, and under SERIALIZABLE a fold is at most
// ordered before the calls whose rows it did not see. Two folders that
// meet on a base row (stale rows) conflict with each other only, and the
// store runs one of them again. A count of a tenant that is no longer
// registered (being deleted) is not folded: its deletion removes it.
//
// Base rows written before delta rows existed are read as base rows, so
// a store written before reads the same counts: there is nothing to
// migrate. (A Vault of a version before delta rows reads only base rows:
// every Vault sharing a store must be of a version that sums them.)
// PutCount sets a count outright (the base row, its delta rows removed),
// for a count built by counting.
//
// # The key space
//
// Tenant data lives under tenant/<tenant-id>/ and is sealed with that
// tenant's data keys; the few system records live under sys/ and are
// sealed with the system keyring. Keys never contain plaintext secrets:
// lookups by secret (API keys) go through keyed HMACs. The only values
// not sealed are the keyrings (wrapped by the key wrapper), the empty
// index, registry and schedule entries, and the plain progress markers
// sys/reseal/ and sys/deleting/. Every value but the keyrings is a record
// of the Vault's, in its own versioned format: the barrier seals and opens
// bytes and knows no format (docs/internals.md, "Stored records", has
// the table of kinds and records; the JSON of before reads as format version 0).
//
//	sys/keyring                              system keyring, wrapped by the key wrapper (the root's keywrap.go)
//	sys/tenant/<tid>                         tenant registry (empty values)
//	sys/apikey/<hmac>                        API and session key lookup -> sealed access.KeyRef
//	sys/nonce/<hmac>                         unused session nonce -> sealed access.KeyRef
//	sys/invite/<hmac>                        live invitation link token -> sealed access.KeyRef
//	sys/formula/<id>                         official reactor formulas
//	sys/proxy/<hmac>                         proxy key lookup -> sealed access.KeyRef
//	sys/expiry/<nanos>/<tid>/<kind>/<id>     expiry schedule for the sweeper (empty values)
//	sys/cvc/<nanos>/<tid>/<id>               when a card's cvc was written, for its removal
//	                                         by the sweeper (empty values; see internal/tokens/cvc.go)
//	sys/cvcscan                              progress of the one scan giving cards stored
//	                                         before cvc retention their schedule
//	sys/fingerprints                         where the fingerprint index is kept: in memory
//	                                         on a store one process holds (internal/tokens/fingerprints.go)
//	sys/reseal/<tid>                         tenant to re-seal after a data key rotation;
//	                                         plain resealState: when to start, last key re-sealed
//	sys/deleting/<tid>                       tenant being deleted: its keys are refused;
//	                                         plain tenants.DeletionState: phase, prefix and last key visited
//	                                         (internal/tenants: DeletePass)
//	sys/auditq/<sink>/<nanos>/<tid>/<id>     audit log line not yet delivered to export
//	                                         sink <sink> (empty values; internal/auditlog/export.go)
//	sys/audit-key/<key id>                   checkpoint signing key (Ed25519): public key,
//	                                         seed wrapped by the key wrapper for this key,
//	                                         created and retired times
//	                                         (internal/auditlog: signing.go, record_key.go)
//	sys/chain-final/<tid>                    final checkpoint of a deleted tenant's audit
//	                                         chain, kept after the tenant (checkpoints.go)
//	sys/chain-unsigned/<nanos>/<tid>         tenant whose audit chain has lines no checkpoint
//	                                         covers, the first at <nanos> (empty values;
//	                                         checkpoints.go)
//	sys/whq/<tid>/<webhook>/<nanos>/<id>     webhook delivery <id> due at <nanos> (empty
//	                                         values; internal/events' outbox.go)
//	sys/ready-probe                          64 KiB of random bytes (not sealed: they
//	                                         are nothing), written then deleted by Ready
//	                                         while the storage is full; left only when
//	                                         the deletion failed (storage_full.go)
//	tenant/<tid>/keyring                     tenant keyring, wrapped by the key wrapper
//	tenant/<tid>/tenant/<tid>                the tenant record
//	tenant/<tid>/<kind>/<id>                 records (application, member, proxy,
//	                                         reactor, formula, invitation, session), each
//	                                         in its binary format (the root's
//	                                         records_<kind>.go; JSON before)
//	tenant/<tid>/idempotency/<hmac>          idempotency key claim or kept response
//	                                         (HMAC of caller and key; idempotency.go)
//	tenant/<tid>/token/<id>                  a token: a tokens.Record in its binary format
//	                                         (internal/tokens/record_token.go; JSON before version 1)
//	tenant/<tid>/erasure/<hash>/<id>         an erasure certificate of the data subject
//	                                         whose keyed hash is <hash> (internal/subjects)
//	tenant/<tid>/idx/subject/<hash>/<id>     the tokens of a data subject (internal/tokens)
//	tenant/<tid>/webhook_delivery/<webhook>/<id>  a delivery of an event to a webhook
//	                                         (internal/events, record_delivery.go)
//	tenant/<tid>/chain_checkpoint/<seq>      signed checkpoint of the tenant's audit chain
//	                                         covering lines 1 to <seq> (16 hex digits;
//	                                         the root's checkpoints.go)
//	tenant/<tid>/chain_link/<nanos>/<id>     the chain link of the line log/<nanos>/<id>:
//	                                         seq, prev and hash (internal/auditlog/record_chain.go)
//	tenant/<tid>/log/<nanos>/<id>            audit log, in time order: a logRecord in its
//	                                         binary format (internal/auditlog record_line.go; JSON before)
//	tenant/<tid>/idx/log-e/<type>/<entity><packed>  the one index entry of a log line,
//	                                         for entity and entity type queries; a UUID
//	                                         <entity> is packed in 17 bytes, and <packed> is
//	                                         <nanos>/<id> in 24 (logs.go).
//	                                         Lines written before record format version 1
//	                                         are indexed as they were, at
//	                                         idx/log-entity/<type>/<entity>/<nanos>/<id>, read
//	                                         beside idx/log-e (so a store of the old layout
//	                                         answers every query from the first open), and
//	                                         idx/log-type/<type>/<nanos>/<id>, read by nothing
//	                                         and removed by the sweeper in batches
//	                                         (logs_retention.go)
//	tenant/<tid>/idx/log-p/<nanos>/<id>/<type>/<entity>  the index entry a read's line
//	                                         waits for, in time order: on a store one process
//	                                         holds, the indexer turns it into the line's
//	                                         idx/log-e entry (internal/auditlog/indexer.go)
//	tenant/<tid>/idx/tl-s/<mac><pos>         the tokens of one list shape (a type and a
//	                                         set of containers) in list order: creation
//	                                         time, then id; <pos> is packed (packPosition:
//	                                         8 bytes of nanoseconds, then a UUID id as a
//	                                         zero byte and its 16 bytes, any other id as it
//	                                         is); <mac>: 16 bytes of the shape's keyed
//	                                         HMAC, or of a type's overflow list. One entry
//	                                         per token, written and removed with the
//	                                         record; a list page merges the shapes its
//	                                         filter takes (internal/tokens/listing)
//	tenant/<tid>/token_shape/<hex mac>       the shape a <mac> stands for (sealed): written
//	                                         by the commit of its first token, at most
//	                                         maxListShapes a tenant (listing, shapes.go)
//	tenant/<tid>/idx/tlo/<hex mac>           a container (its keyed HMAC) at or below
//	                                         which tokens of the overflow lists are
//	                                         (empty value; written with the first such
//	                                         token of a shape, never removed)
//	tenant/<tid>/count/tok-s/<hex mac>       how many tokens the shape (or overflow list)
//	                                         holds, kept in the commits that create, move
//	                                         and remove them (sealed)
//	tenant/<tid>/count/<kind>                how many applications, reactors, proxies,
//	                                         members or invitations it holds, kept by the
//	                                         transaction that writes the first version of
//	                                         a record or deletes it (CountedKinds)
//	sys/count/tenants                        how many tenants the registry holds, kept by
//	                                         CreateTenant and DeleteTenant (sealed, system
//	                                         keyring; internal/tenants count.go)
//	<count key>/+/<instance>/<stamp>         a delta row of the count at <count key> (any
//	                                         of the three above): a change to it, written by
//	                                         instance <instance> in one store transaction;
//	                                         <stamp> is 16 hex digits of the writer's clock
//	                                         (nanoseconds) and 16 of a sequence number; a
//	                                         count record, sealed like its count (Kept counts)
//	sys/lists                                the one-time build of the token lists kept
//	                                         before shapes (idx/tl-t, idx/tl-c, count/tok-t,
//	                                         count/tok-c: removed now), read by the build
//	                                         of shapes to know which counts to build
//	sys/lists-shapes                         the one-time build of the token lists by shape
//	                                         for a store written before them (sealed,
//	                                         system keyring; listing, build.go)
//	tenant/<tid>/idx/<name>/<value>/...      secondary indexes (empty values), among them
//	tenant/<tid>/idx/pending-session/<app>/<nanos>/<id>  unauthorized sessions of a
//	                                         public application, by expiry (internal/sessions)
//	tenant/<tid>/idx/pending-session-addr/<app>/<addr>/<nanos>/<id>  the same per
//	                                         client address (<addr> a keyed MAC of it), by
//	                                         expiry (internal/sessions)
//	tenant/<tid>/idx/intent-creator/<creator>/<nanos>/<id>  live token intents of
//	                                         one application or session, by expiry
//	                                         (internal/intents)
//	tenant/<tid>/idx/intent-creator-addr/<creator>/<addr>/<nanos>/<id>  the same per
//	                                         client address (<addr> a keyed MAC of it)
//	tenant/<tid>/idx/wh-p/<webhook>/<id>     webhook delivery <id>, while it is pending:
//	                                         counted for the caps on pending deliveries
//	                                         (internal/events' pending.go)
//	tenant/<tid>/idx/wh-pt/<webhook>/<id>    the same, for a pending webhook.test delivery
package barrier
