package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/store"
)

var (
	_ store.Store      = (*Store)(nil)
	_ store.Generation = (*tx)(nil)
)

const (
	// DefaultSchema is the schema used when Options.Schema is empty.
	DefaultSchema = "tokenvault"
	// DefaultMaxRetries is the number of retries used when
	// Options.MaxRetries is zero.
	DefaultMaxRetries = 10

	// tableName is the table of keys and values, inside the schema;
	// genTableName the table of the generation counter's one row.
	tableName    = "kv"
	genTableName = "generation"

	// Retry backoff (internal/backoff): the n-th retry (from 0) sleeps a
	// random duration in [d/2, d] where d = minBackoff << n, capped at
	// maxBackoff.
	minBackoff = time.Millisecond
	maxBackoff = 50 * time.Millisecond

	// lockAfter is the number of failed attempts after which an Update
	// locks the table (see Update).
	lockAfter = 3

	// rollbackTimeout bounds the ROLLBACK sent after a failed or
	// cancelled transaction, which must not use the caller's (possibly
	// cancelled) context.
	rollbackTimeout = 5 * time.Second
)

// SQLSTATE codes: the first two are failures a retry of the whole
// transaction can cure.
const (
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeUndefinedTable       = "42P01"
	codeDiskFull             = "53100"
)

// full wraps store.ErrFull around err when PostgreSQL refused the
// transaction for a full disk (disk_full), so that the Vault answers
// "storage is full" rather than an internal error.
func full(err error) error {
	var pgErr *pgconn.PgError
	if err != nil && !errors.Is(err, store.ErrFull) && errors.As(err, &pgErr) && pgErr.Code == codeDiskFull {
		return fmt.Errorf("%w: %w", store.ErrFull, err)
	}
	return err
}

// schemaPattern is what Options.Schema accepts: a plain, unquoted SQL
// identifier of at most 63 bytes (PostgreSQL's NAMEDATALEN-1). It is still
// quoted when used, so upper-case letters are kept as written.
var schemaPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Options configures [Open]. The zero value, like a nil *Options, gives the
// defaults.
type Options struct {
	// Schema is the PostgreSQL schema holding the table. Empty means
	// "tokenvault". It must be a plain identifier: a letter or underscore
	// followed by letters, digits and underscores, at most 63 bytes, not
	// beginning with "pg_" (reserved by PostgreSQL). Several Vaults can
	// share one database by using different schemas.
	Schema string

	// MaxRetries bounds how many times an Update is retried after a
	// serialization failure or a deadlock. Zero means 10; negative means
	// never retry (the failure is returned).
	MaxRetries int

	// MaxGroup bounds how many concurrent Updates share one transaction
	// (see Store.Update). Zero means 128; 1 or less means no sharing:
	// every Update has a transaction of its own.
	MaxGroup int
}

// DefaultMaxGroup is the group size used when Options.MaxGroup is zero.
const DefaultMaxGroup = 128

// Store is a [store.Store] on a PostgreSQL table. Any number of Stores, in
// any number of processes, may use the same schema at once.
type Store struct {
	pool       *pgxpool.Pool
	schema     string
	table      string // quoted, schema-qualified
	genTable   string // quoted, schema-qualified
	maxRetries int
	sql        statements

	gate store.Gate // Close waits for the transactions in progress

	// inflight counts the Updates in progress: one alone runs in a
	// transaction of its own at once; more go to the group committer
	// (nil when Options.MaxGroup <= 1).
	inflight atomic.Int64
	group    *groupCommitter
	// rerunFailed isolates a failing function of a shared transaction
	// the other way, for BenchmarkGroupFailures: the transaction is
	// rolled back, the function runs alone and the others again.
	rerunFailed bool
}

// statements are the SQL texts, built once with the table name quoted.
type statements struct {
	get, put, del string
	// putMany and delMany take arrays: keys (and values).
	putMany, delMany string
	// getGen reads the generation; advanceGen adds $1 to it.
	getGen, advanceGen string
	// beginRead starts a View; beginWrite an Update; beginWriteLock an
	// Update that locks the table (see Update).
	beginRead, beginWrite, beginWriteLock []string
	// scan[upper][after] selects one page of a prefix scan: with or
	// without an upper bound (the prefix's successor), and with or without
	// an exclusive lower bound (the after key).
	scan [2][2]string
	// scanDesc[bounded] selects one page of a descending prefix scan:
	// with or without an exclusive upper bound (the lesser of the
	// prefix's successor and the before key, or the last key of the page
	// before).
	scanDesc [2]string
}

func newStatements(table, genTable string) statements {
	var s statements
	s.getGen = "SELECT value FROM " + genTable + " WHERE id = 1"
	s.advanceGen = "UPDATE " + genTable + " SET value = value + $1 WHERE id = 1"
	s.get = "SELECT value FROM " + table + " WHERE key = $1"
	s.put = "INSERT INTO " + table + " (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
	s.del = "DELETE FROM " + table + " WHERE key = $1"
	s.putMany = "INSERT INTO " + table + " (key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
	s.delMany = "DELETE FROM " + table + " WHERE key = ANY($1::bytea[])"
	s.beginRead = []string{"BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"}
	s.beginWrite = []string{"BEGIN ISOLATION LEVEL SERIALIZABLE, READ WRITE"}
	s.beginWriteLock = append(s.beginWrite[:1:1], "LOCK TABLE "+table+" IN SHARE ROW EXCLUSIVE MODE")
	for upper := range 2 {
		for after := range 2 {
			// $1 prefix, $2 limit, then the upper bound and the
			// after key when present. Absent bounds are left out of
			// the text rather than passed as NULL, so each variant is
			// a plain range on the primary key.
			q := "SELECT key, value FROM " + table + " WHERE key >= $1"
			n := 3
			if upper == 1 {
				q += fmt.Sprintf(" AND key < $%d", n)
				n++
			}
			if after == 1 {
				q += fmt.Sprintf(" AND key > $%d", n)
			}
			s.scan[upper][after] = q + " ORDER BY key LIMIT $2"
		}
	}
	s.scanDesc[0] = "SELECT key, value FROM " + table + " WHERE key >= $1 ORDER BY key DESC LIMIT $2"
	s.scanDesc[1] = "SELECT key, value FROM " + table + " WHERE key >= $1 AND key < $3 ORDER BY key DESC LIMIT $2"
	return s
}

// Open connects to the PostgreSQL server named by dsn, a URL
// (postgres://user@host:port/db?sslmode=disable) or a key=value connection
// string as pgx accepts; pool settings such as pool_max_conns may be given in
// it. Open checks that the server answers but does not touch the schema:
// call [Store.Migrate] before the first transaction.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if !schemaPattern.MatchString(o.Schema) {
		return nil, fmt.Errorf("postgres: invalid schema name %q: want a letter or underscore followed by letters, digits and underscores, at most 63 in all", o.Schema)
	}
	if strings.HasPrefix(o.Schema, "pg_") {
		return nil, fmt.Errorf("postgres: invalid schema name %q: names beginning with pg_ are reserved for PostgreSQL", o.Schema)
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors may quote the DSN, password included.
		return nil, errors.New("postgres: invalid connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if o.MaxGroup == 0 {
		o.MaxGroup = DefaultMaxGroup
	}
	table := pgx.Identifier{o.Schema, tableName}.Sanitize()
	genTable := pgx.Identifier{o.Schema, genTableName}.Sanitize()
	s := &Store{
		pool:       pool,
		schema:     o.Schema,
		table:      table,
		genTable:   genTable,
		maxRetries: o.MaxRetries,
		sql:        newStatements(table, genTable),
	}
	if o.MaxGroup > 1 {
		s.group = newGroupCommitter(s, o.MaxGroup)
	}
	return s, nil
}

// Schema returns the schema the Store uses.
func (s *Store) Schema() string { return s.schema }

// Migrate creates the schema and its table if they do not exist. It is
// idempotent and safe to run from several processes at once (they take turns
// on an advisory lock), and when the table already exists it only reads the
// catalog, so a role without CREATE privilege can run it against a database
// prepared by an administrator. A server calls it once at start, after Open
// and before opening the Vault.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		h := fnv.New64a()
		h.Write([]byte("tokenvault/store/postgres/migrate/" + s.schema))
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64())); err != nil {
			return err
		}
		var tableExists, genExists, schemaExists bool
		err := tx.QueryRow(ctx,
			"SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $3)",
			s.table, s.genTable, s.schema).Scan(&tableExists, &genExists, &schemaExists)
		if err != nil {
			return err
		}
		if !schemaExists {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return err
			}
		}
		if !tableExists {
			if _, err := tx.Exec(ctx, "CREATE TABLE "+s.table+" (key bytea PRIMARY KEY, value bytea NOT NULL)"); err != nil {
				return err
			}
		}
		if !genExists {
			// A schema made by an older version has no generation
			// table: it is added, starting at 0.
			if _, err := tx.Exec(ctx, "CREATE TABLE "+s.genTable+" (id int PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+s.genTable+" VALUES (1, 0)"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate schema %s: %w", s.schema, err)
	}
	return nil
}

// begin registers a transaction so that Close waits for it.
func (s *Store) begin() error {
	if !s.gate.Enter() {
		return fmt.Errorf("postgres: %w", store.ErrClosed)
	}
	return nil
}

func (s *Store) end() { s.gate.Leave() }

// View runs fn in a REPEATABLE READ, READ ONLY transaction: fn sees one
// snapshot of the committed data, taken at its first statement, which
// includes every Update that returned before View was called. Such a
// transaction never waits for writers and never fails with a serialization
// error, so fn runs exactly once. Put and Delete return an error.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	_, err := s.attempt(ctx, fn, false, false)
	return err
}

// Update runs fn in a SERIALIZABLE transaction. When PostgreSQL aborts it
// with a serialization failure (SQLSTATE 40001) or a deadlock (40P01), the
// whole transaction is rolled back and fn is run again in a new one, after a
// short random backoff, up to Options.MaxRetries times; the error of the last
// attempt is returned when they run out. fn's own error is returned
// unchanged, without a retry, unless the transaction had already failed with
// one of those codes (fn then usually returns that error, wrapped or not).
//
// Retries are optimistic at first. From the fourth attempt on, the
// transaction starts by locking the table in SHARE ROW EXCLUSIVE mode: it
// waits for the transactions that have written to finish, then holds off
// every other write (not reads) until it ends, so nothing can conflict with
// it and it commits. That bounds the attempts an Update needs under any
// contention, such as many processes incrementing one counter, at the cost
// of briefly serializing writers, and only while such contention lasts.
//
// ctx is checked before fn runs, by every statement fn issues, and after fn
// returns; an error there rolls back. Once fn has returned nil the commit is
// not interrupted by ctx, so that Update returning nil always means
// committed and returning ctx.Err() always means nothing was written.
//
// Concurrent Updates share transactions (group commit, see the package
// documentation): while one Update is in progress, the next ones queue and
// their functions run together in one transaction, one after the other,
// committed together. Each still fails alone: a function that fails or
// panics, or whose ctx is done, is undone without the others, and its
// caller gets its own error or panic.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	defer s.inflight.Add(-1)
	if s.inflight.Add(1) == 1 || s.group == nil || store.OwnTransaction(ctx) {
		return full(s.updateAlone(ctx, fn))
	}
	return full(s.group.update(ctx, fn))
}

// updateShared is Update through the group committer even when it is the
// only Update in flight: for tests of the shared path.
func (s *Store) updateShared(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return s.group.update(ctx, fn)
}

// updateAlone runs fn in a transaction of its own, with the retries
// described at Update.
func (s *Store) updateAlone(ctx context.Context, fn func(store.Tx) error) error {
	retryable, err := s.attempt(ctx, fn, true, false)
	wait := backoff.Backoff{Base: minBackoff, Max: maxBackoff}
	for retry := 0; retryable; retry++ {
		if retry >= s.maxRetries {
			return fmt.Errorf("postgres: update: gave up after %d attempts: %w", retry+1, err)
		}
		if !sleep(ctx, wait.Next()) {
			return ctx.Err()
		}
		retryable, err = s.attempt(ctx, fn, true, retry+1 >= lockAfter)
	}
	return err
}

// sleep waits d, the backoff before a retry, and reports false if ctx was
// done first.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// attempt runs fn once in a new transaction, committing it when writable and
// fn succeeds. It reports whether the failure is one a retry can cure.
//
// The transaction is opened lazily: BEGIN goes to the server in one batch
// with the transaction's first statement, and COMMIT in one batch with its
// last buffered writes, so an Update costs one round trip per read plus one,
// and an Update that only writes costs one in all.
//
// lock takes the table lock described at Update first. It must come before
// any read: a SERIALIZABLE transaction's snapshot is taken at its first
// query, so the snapshot then includes every write the lock waited for.
func (s *Store) attempt(ctx context.Context, fn func(store.Tx) error, writable, lock bool) (retryable bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		return false, s.wrap("connect", err)
	}
	t := &tx{s: s, ctx: ctx, conn: conn, writable: writable, begin: s.sql.beginRead}
	if writable {
		t.begin = s.sql.beginWrite
		if lock {
			t.begin = s.sql.beginWriteLock
		}
	}
	// A plain defer rather than recover-and-repanic: it rolls back while a
	// panic in fn unwinds, and the panic keeps its original stack.
	defer func() {
		t.done = true
		if conn.Conn().PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			defer cancel()
			// An error here means the connection is broken. Nothing was
			// committed either way, and Release discards a connection
			// that is not idle.
			_, _ = conn.Exec(rctx, "ROLLBACK")
		}
		conn.Release()
	}()

	fnErr := fn(t)
	if t.err != nil && isRetryable(t.err) {
		return true, t.err
	}
	if fnErr != nil {
		return false, fnErr
	}
	if writable && t.err == nil {
		// The writes done once per transaction (store.PreCommit),
		// buffered and sent with COMMIT.
		if err := t.pre.Write(t); err != nil {
			if t.err != nil && isRetryable(t.err) {
				return true, t.err
			}
			return false, err
		}
	}
	if t.err != nil {
		// fn ignored a failed statement; the transaction is aborted.
		return false, t.err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if !writable {
		return false, nil
	}
	// This is the commit point: past it, cancelling ctx changes nothing.
	t.ctx = context.WithoutCancel(ctx)
	if err := t.commit(); err != nil {
		return isRetryable(err), err
	}
	return false, nil
}

// wrap adds the operation to a database error, and a hint when the table is
// missing.
func (s *Store) wrap(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeUndefinedTable {
		return fmt.Errorf("postgres: %s: table %s does not exist (call Migrate first): %w", op, s.table, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// isRetryable reports whether err is a serialization failure or a deadlock.
func isRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) &&
		(pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected)
}

// Close waits for transactions in progress, then closes every connection.
// Later View and Update calls return an error wrapping [store.ErrClosed].
// Closing twice is not an error. Close does not drop anything.
func (s *Store) Close() error {
	if !s.gate.Close() {
		return nil
	}
	if s.group != nil {
		s.group.close()
	}
	s.pool.Close()
	return nil
}
