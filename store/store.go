// Package store defines the storage interface beneath a Vault: an ordered,
// transactional key-value store.
//
// The store is narrow and untrusted. Everything a Vault writes under a tenant
// is sealed before it reaches a Store, and keys never contain plaintext
// secrets, so an implementation only moves bytes. All domain logic, indexes
// included, lives above it; a new backend is a small package that passes
// [github.com/tokenvault/tokenvault/store/storetest.Run].
//
// Optional interfaces tell what a store can do beyond that: [SingleProcess],
// [Generation], [Snapshotter], [Appender], and [PreCommit], which lets the
// Update functions sharing one store transaction (a group commit)
// contribute to one write done once before it commits: the Vault writes
// its count changes that way, one delta row per count per store
// transaction, read by nothing on the commit path.
//
// This package imports nothing of the module, so the root package can default
// to one implementation without an import cycle.
package store

import (
	"context"
	"errors"
	"io"
)

// ErrStop may be returned by a [Tx.Scan] or [Tx.ScanReverse] callback to end
// the scan early. The scan then returns nil.
var ErrStop = errors.New("store: stop scan")

// ErrClosed is returned by View and Update after Close.
var ErrClosed = errors.New("store: closed")

// ErrFull is wrapped by the error of an Update (or an Append) that failed
// because the backend's storage is full: no space left on the device or
// over quota (ENOSPC, EDQUOT writing or syncing a file), PostgreSQL's
// disk_full (SQLSTATE 53100). As with any failed Update, nothing of it was
// written; a later one may succeed once space is freed. Backends wrap it
// so that the layer above tells a full disk from a broken one without
// knowing the backend.
var ErrFull = errors.New("store: storage is full")

// Store is an ordered, transactional key-value store. Keys are compared as
// byte strings. Implementations are safe for concurrent use.
type Store interface {
	// View runs fn in a read-only transaction. A Put or Delete inside it
	// returns an error.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in a read-write transaction. If fn returns an error or
	// panics, nothing it wrote is visible, ever; otherwise every write is
	// durable (as far as the backend promises durability) when Update
	// returns nil.
	//
	// fn may be called more than once (a backend may coalesce concurrent
	// updates into one transaction and retry them), so it must not have
	// side effects outside the transaction that cannot be repeated.
	//
	// If ctx is done before the transaction commits, Update returns
	// ctx.Err() and nothing is written.
	Update(ctx context.Context, fn func(Tx) error) error

	// Close releases the store. Transactions in progress finish first.
	Close() error
}

// Tx is a transaction. It is valid only during the function passed to View or
// Update and must not be used from several goroutines at once.
type Tx interface {
	// Get returns the value stored under key, or nil and no error when the
	// key does not exist. The returned slice belongs to the caller.
	Get(key []byte) ([]byte, error)

	// Put stores value under key, replacing any previous value. The store
	// keeps its own copy of key and value. A nil value stores an empty value.
	Put(key, value []byte) error

	// Delete removes key. Deleting a missing key is not an error.
	Delete(key []byte) error

	// Scan calls fn for the keys beginning with prefix, in ascending order,
	// starting with the first key greater than after (from the first key of
	// the prefix when after is nil), visiting at most limit keys (no bound
	// when limit <= 0). Writes made earlier in the same transaction are
	// visible.
	//
	// The key and value slices passed to fn are valid only until fn returns
	// and must not be modified; copy them to keep them. fn must not write to
	// the transaction. If fn returns ErrStop the scan ends and Scan returns
	// nil; any other error ends the scan and is returned.
	Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error

	// ScanReverse is Scan in descending order: it calls fn for the keys
	// beginning with prefix, from the last one less than before (the
	// last key of the prefix when before is nil) down to the first key
	// of the prefix, visiting at most limit keys (no bound when limit
	// <= 0). Everything else is as for Scan: writes made earlier in the
	// transaction are visible, the slices are valid only until fn
	// returns, fn must not write, ErrStop ends the scan without error.
	// It lets a newest-first list (audit logs) read only its page.
	ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error
}

// SingleProcess is implemented by stores that one process holds
// exclusively (an in-memory store; a bbolt file, which its opener locks).
// A Vault on such a store may cache what it read, knowing no other process
// changes it; stores shared between processes (PostgreSQL) must not
// implement it.
type SingleProcess interface {
	SingleProcess()
}

// Generation is implemented by the transactions of stores that several
// processes share (PostgreSQL) and that keep a generation counter for them:
// a number, stored with the data, that a transaction advances when it
// changes something other processes may have cached, and that every
// transaction reads as of its own snapshot. A process that caches what it
// read in a transaction, tagged with that transaction's generation, may
// serve it in a later transaction that reads the same generation: nothing
// that advances the counter has committed in between. A Vault caches
// authenticated keys this way; stores held by one process
// ([SingleProcess]) need no counter and do not implement it.
type Generation interface {
	// Generation returns the counter as of the transaction's snapshot,
	// and whether this transaction (or another Update sharing its
	// database transaction, see Store.Update) has advanced it: what such
	// a transaction reads may not be committed, and must not be cached.
	Generation() (gen uint64, advanced bool, err error)

	// AdvanceGeneration advances the counter when the transaction
	// commits, in the same commit as its writes; nothing is advanced if
	// it rolls back. In a View it returns an error.
	AdvanceGeneration() error
}

// Snapshotter is implemented by stores that can write a consistent copy of
// themselves while they keep serving: a backup. store/bolt writes its
// database file as of one read transaction; the copy opens with bolt.Open.
// Stores that leave backups to their server (PostgreSQL: pg_dump,
// pg_basebackup) do not implement it.
//
// The snapshot holds the values as stored: sealed as they are in the store,
// never decrypted, and without the master key (which is not in the store).
type Snapshotter interface {
	// WriteSnapshot writes the snapshot to w and returns how many bytes it
	// wrote. Writes committed before it began are in the snapshot; writes
	// that commit while it runs are not. If ctx is done, it stops with
	// ctx.Err() and w holds a partial copy.
	WriteSnapshot(ctx context.Context, w io.Writer) (int64, error)
}

// Entry is a key and its value.
type Entry struct {
	Key, Value []byte
}

// Appender is implemented by stores that can make new entries durable
// outside a write transaction, for less than a commit costs: store/bolt
// writes them to an append log synced once for every group of callers, and
// folds them into its file later in large transactions. A Vault appends
// the audit lines of reads this way; everything else goes through Update.
//
// Appended entries are durable when Append returns, but a transaction sees
// them only once they are folded: by a Fold that begins after the Append
// returned, by the store on its own (store/bolt: within a fraction of a
// second), or at the latest when the store is next opened. So the caller
// must append only keys that are new (nothing else writes them) and must
// Fold before it reads them: the Vault folds before it lists logs, indexes
// or exports lines, and before anything that removes them.
type Appender interface {
	// Append makes entries durable, as one unit: after a crash, all of
	// them are folded or none. The store keeps its own copy of them. It
	// returns an error wrapping ErrClosed after Close, and ctx.Err() if
	// ctx is done before the entries are written. On any other error the
	// entries may or may not be kept; the caller may write them again with
	// Update (same keys, same values) and lose nothing.
	Append(ctx context.Context, entries []Entry) error

	// Fold writes every entry whose Append has returned into the store,
	// in one write transaction, and returns once it has committed: a
	// transaction begun afterwards sees them. On an error, the entries
	// stay appended, and a later Fold writes them.
	Fold(ctx context.Context) error
}
