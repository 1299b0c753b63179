// Package postgres is a [store.Store] on PostgreSQL (tested with version 15),
// through pgx and its connection pool. Unlike the bbolt
// store, any number of Stores in any number of processes may use one database
// at once, so several Vault instances can serve the same tenants behind a load
// balancer.
//
// # Tables
//
// The keys and values live in one table in one schema:
//
//	CREATE TABLE <schema>.kv (key bytea PRIMARY KEY, value bytea NOT NULL)
//
// beside a table of one row holding the generation counter (see
// Generation below):
//
//	CREATE TABLE <schema>.generation (id int PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)
//
// bytea compares as unsigned bytes, which is the order the store contract
// asks for. A Scan is a range on the primary key index: key >= prefix AND key
// < the prefix's successor (the prefix with its last byte below 0xff
// incremented, the rest cut off; no upper bound for an empty or all-0xff
// prefix) AND key > after, ORDER BY key, read in pages of 256 rows, each page
// continuing after the last key of the one before. Only one page is held in
// memory, and it is read in full before the callback sees any of it, so the
// callback may call Get. Keys must be non-empty and, being indexed, at most
// about 2.7 kB (the Vault's are far shorter); values may be up to 1 GB.
//
// # Schema and Migrate
//
// [Options].Schema names the schema, "tokenvault" by default; it must be a
// plain identifier (letters, digits and underscores, not starting with a
// digit) and is always quoted. Separate schemas let several independent
// Vaults, or test runs, share one database.
//
// [Open] connects but does not touch the schema. [Store.Migrate] creates the
// schema and the tables when they are missing (a schema made by an older
// version gets its generation table, starting at 0): the server calls it once at
// start, after Open and before opening the Vault. It is idempotent, safe to
// run from several processes at once (they take turns on an advisory lock),
// and only reads the catalog when the table exists, so a role that may not
// create anything can run it against a database an administrator prepared.
// Until then every transaction fails with an error saying to call Migrate.
//
// # Isolation and retries
//
// Update runs at SERIALIZABLE isolation. The Vault relies on each Update
// behaving as if it ran alone: deduplicating tokenization reads a
// fingerprint index and then inserts, the sweeper reads the expiry schedule
// and then deletes, key regeneration replaces an index entry. Under snapshot
// isolation (REPEATABLE READ) two instances could both find no token with a
// fingerprint and both create one, since nothing they write overlaps;
// SERIALIZABLE aborts one of them instead.
//
// An aborted transaction (SQLSTATE 40001, serialization failure, or 40P01,
// deadlock) is rolled back and fn is run again in a new one, after a random
// backoff growing from 1ms to 50ms, up to [Options].MaxRetries times (10 by
// default); the store contract allows fn to run more than once. From the
// fourth attempt on, the transaction first locks the table in SHARE ROW
// EXCLUSIVE mode, which waits for the writers in flight and holds off new
// writes (reads go on) until it ends, so that it cannot conflict and
// commits: however hot a key, such as one counter incremented by many
// processes, an Update needs a bounded number of attempts. Writers are
// serialized only while such contention lasts. (An autovacuum of the table
// also conflicts with that lock; PostgreSQL cancels it after
// deadlock_timeout, one second by default, so the rare escalation that meets
// one may wait that long.)
//
// View runs at REPEATABLE READ, READ ONLY: one snapshot of committed data,
// which includes every Update that returned before View was called. Such a
// transaction never blocks, never waits for a safe snapshot (as SERIALIZABLE
// READ ONLY DEFERRABLE would) and is never aborted, so a View runs fn exactly
// once, as the contract expects of it. The price is PostgreSQL's read-only
// anomaly: in rare interleavings a View can see the effect of one Update but
// not of another that serialized before it. Views only answer reads; every
// decision the Vault acts on is taken inside an Update, which does not have
// this anomaly. Put and Delete in a View return an error.
//
// # Group commit
//
// Every commit waits for its WAL to reach the disk, so concurrent Updates
// share transactions. An Update alone runs at once in a transaction of its
// own; while one is in progress, the next ones queue, and one committer
// goroutine runs everything queued (up to [Options].MaxGroup functions) one
// function after the other in one SERIALIZABLE transaction and one COMMIT,
// as soon as the previous shared transaction has ended: one WAL flush and a
// few round trips for many callers, and no timer. Only one shared
// transaction runs at a time: SERIALIZABLE turns the many row locks of a
// large transaction's reads into a lock on the whole table, so two of them
// at once would mostly abort each other. (Running the next batch's
// functions while the previous COMMIT waits for the disk was tried: the
// COMMIT must then carry no write, lest it wait for rows the next batch
// locked while that batch waits for it, which costs a round trip per batch,
// and it measured no faster on two CPUs.) Every caller is answered after the
// COMMIT, its function's own error too (which may come from what an earlier
// function in the transaction wrote); nothing is acknowledged before it is
// committed.
//
// An Update whose context is marked with [store.WithOwnTransaction] never
// joins the shared transaction: it runs in one of its own, beside it. The
// shared transaction runs its functions one after the other, so one that
// reads a lot (a round trip per read) holds up every caller queued behind
// it; the Vault's audit chain linker, which reads every line it links, is
// marked so.
//
// A function that returns an error, panics, or whose caller's context ends
// fails only its own caller and writes nothing. Its writes are buffered
// until a read or the commit sends them: one that sent none is undone by
// dropping its buffer, at no cost; the first time one sends writes of its
// own, a SAVEPOINT goes ahead of them in the same round trip, and ROLLBACK
// TO SAVEPOINT (sent with the next round trip; at once after a failed
// statement, which leaves the transaction refusing everything else) undoes
// them. Savepoints thus cost no round trip of their own, and functions that
// write without reading their writes back (the Vault's) take none. A panicking function runs
// again alone on its caller's goroutine, so that the panic reaches its
// caller with its own stack. (The other way, rolling back the whole
// transaction and running the failing function alone and the others again,
// costs a shared transaction per failure; in a workload where some calls
// fail, as authorization and validation errors do, that is most batches:
// BenchmarkGroupFailures, one Update in ten failing at 64 goroutines,
// measured it 1.6 to 3 times slower.)
//
// The transactions implement [store.PreCommit]: what a function adds to a
// write done once per transaction is kept with its function, dropped if
// it fails, and written, for the functions that succeeded, after the last
// of them and before COMMIT (buffered, so it costs no round trip); a
// transaction of its own does it after its function. If that write fails,
// the shared transaction is rolled back and every caller runs alone.
//
// A serialization failure or deadlock rolls the shared transaction back and
// runs it again after a backoff, with the table lock from the fourth
// attempt, like an Update alone. A failure no savepoint contains (a write
// the database refuses sent with another function's read or with COMMIT, a
// statement failing before its function's first write, a function that
// ignores a failed statement) rolls it back and every caller runs its
// function alone, which tells which one fails. A COMMIT whose outcome is
// unknown (the connection broke) answers every caller with its error, as it
// would an Update alone.
//
// # Generation
//
// The transactions implement [store.Generation]: a counter, in its own
// table, that every transaction reads as of its snapshot in the round trip
// that opens it (with BEGIN), and that AdvanceGeneration raises by one in
// the transaction's COMMIT batch, so a transaction that rolls back advances
// nothing. The Vault advances it in every transaction that changes what an
// API key authenticates as, and caches authenticated keys under the
// generation they were read at, serving them only to transactions that read
// the same one: several Vaults on one schema keep an authentication cache,
// and a key regenerated, revoked or deleted through one of them is refused
// by all of them from the moment the call that changed it returns, with no
// message between them (LISTEN/NOTIFY would need a connection per instance
// and could not say "changed" before the call returns). Concurrent
// advances update the same row, so two transactions changing keys at once
// conflict and one is retried; keys change rarely. A transaction reports
// the counter as advanced once it (or another function sharing it) has
// advanced it: what it reads is not committed yet, and is not cached.
//
// # Round trips
//
// A transaction is opened lazily: BEGIN and the generation read travel in
// one pipelined batch with its first read (or alone, when Generation is
// asked first), writes are buffered and travel with the next read or with
// COMMIT, and several writes go as at most two statements taking arrays (a
// DELETE and a multi-row upsert, in key order). An Update costs one round
// trip per read plus one; one that only writes costs one in all. A write the
// database refuses (a key too long for the index) therefore fails the next
// read or the commit rather than the Put itself; either way the Update fails
// and nothing is written.
//
// # Connections, cancellation and Close
//
// Each Store has a pgxpool pool, sized by pool settings in the connection
// string (pool_max_conns=N; pgxpool's default is the larger of 4 and the
// number of CPUs). A transaction holds one connection for its duration.
// ctx bounds every statement of a transaction of its own; when it is done
// before the commit, the transaction is rolled back and ctx.Err() returned.
// In a shared transaction the statements are not bound by any caller's
// context (one caller giving up must not abort the others): a function
// whose caller's context ends fails at its next call and is undone, and its
// caller gets ctx.Err(). The commit itself is
// not interrupted, so nil means committed. A panic in fn rolls back and
// propagates. Close waits for transactions in progress, then closes the pool;
// later View and Update calls return an error wrapping [store.ErrClosed].
//
// # Running the tests
//
// The tests of this package, and the multi-instance tests of the root
// package, run against the server named by TOKENVAULT_TEST_POSTGRES_DSN and
// are skipped without it. Each test uses a fresh schema with a random name
// and drops it at the end. .ci/run starts a throwaway cluster for them; to do
// the same by hand (as root, prefix the PostgreSQL commands with
// "runuser -u postgres --", after chown postgres "$dir"):
//
//	dir=$(mktemp -d)
//	bin=/usr/lib/postgresql/15/bin
//	$bin/initdb -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync
//	$bin/pg_ctl -D "$dir/data" -l "$dir/server.log" -w \
//	  -o "-c listen_addresses=127.0.0.1 -p 55432 -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start
//	export TOKENVAULT_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable'
//	go test -race ./store/postgres/ .
//	go test -run XXX -bench . ./store/postgres/
//	$bin/pg_ctl -D "$dir/data" -m immediate stop && rm -rf "$dir"
//
// fsync is off because nothing in a test cluster needs to survive a crash;
// benchmarks against it measure round trips and server CPU, not the disk.
package postgres
