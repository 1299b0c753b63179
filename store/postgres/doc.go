// Package postgres is a [store.Store] on PostgreSQL (tested with version 15),
// through pgx and its connection pool. Unlike the bbolt
// store, any number of Stores in any number of processes may use one database
// at once, so several Vault instances can serve the same tenants behind a load
// balancer.
//
// # Table
//
// Everything lives in one table in one schema:
//
//	CREATE TABLE <schema>.kv (key bytea PRIMARY KEY, value bytea NOT NULL)
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
// schema and the table when they are missing: the server calls it once at
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
// # Round trips
//
// A transaction is opened lazily: BEGIN travels in one pipelined batch with
// its first read, writes are buffered and travel with the next read or with
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
// ctx bounds every statement; when it is done before the commit, the
// transaction is rolled back and ctx.Err() returned. The commit itself is
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
