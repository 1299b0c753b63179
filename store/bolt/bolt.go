// Package bolt is a [store.Store] on a single bbolt file: durable, ordered,
// and safe for concurrent use within one process. bbolt takes an exclusive
// file lock, so only one process (and one Store) can have the file open.
//
// Concurrent Updates share commits (groupcommit.go); appended entries
// (store.Appender) go to an append log beside the file, <file>.appends.<n>,
// and are folded into it in large transactions (appendlog.go); and a durable store
// keeps up to a few MB of zeros written past its data, so that commits
// overwrite blocks the file already has (reserve.go): the file is that much
// longer than its data.
//
// A damaged file is an error, never a crash of the process: Open checks it,
// and a damaged page met later fails its transaction with a *DamagedError
// (damage.go).
package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/precommit"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.Snapshotter = (*Store)(nil)
	_ store.Appender    = (*Store)(nil)
)

// bucketName is the one bucket holding every key. The store's keys are
// already namespaced by the layer above, so nested buckets would buy nothing.
var bucketName = []byte("kv")

const (
	defaultTimeout      = time.Second
	defaultMaxBatchSize = 1000
	// fillPercent is how full a page is left when it splits (bbolt's
	// default is half). Most keys are appended at the end of their range
	// (time-ordered ids: records, log lines, their indexes), and a page
	// that splits there never receives another key, so a half-full split
	// leaves half of every such page empty for good. Not all the way full:
	// the fingerprint index takes its keys at random places, and a page
	// left full there splits again at the next key. Measured with the
	// root package's TestFileSize (pages in use, bytes per token, 100k
	// single tokenizes / 100k in batches of 1,000): 0.5 -, 1745; 0.7 -,
	// 1284; 0.8 1149, 1201; 0.9 1169, 1223; 0.95 -, 1298; 1.0 -, 1260;
	// and at 1M tokens 0.8 1098, 1106 against 0.9 1120, 1129.
	fillPercent = 0.8
)

// Options configures [Open]. The zero value, like a nil *Options, gives the
// defaults.
type Options struct {
	// Timeout bounds the wait for the file lock. Zero means one second, so
	// that opening a file another process holds fails quickly with a clear
	// error instead of hanging; negative means wait forever.
	Timeout time.Duration

	// NoSync skips fsync on commit and on the append log. It is for tests
	// only: a crash or power loss can lose committed transactions and
	// appended entries, or corrupt the file.
	NoSync bool

	// MaxBatchSize bounds how many concurrent Updates one transaction
	// carries (see Update). Zero or negative means 1000.
	MaxBatchSize int

	// OnCommit, when set, is called after each write transaction commits,
	// with the number of Updates it carried (more than one when a batch
	// coalesced concurrent Updates; a batch rerun after a failure counts
	// the Updates of the transaction that committed) and how long the
	// commit took: from the end of its last Update's function to the end
	// of bbolt's Commit (writing pages, fsync, meta page). A transaction
	// that rolls back is not reported. It runs on the committing goroutine
	// before any Update of the batch returns, so it must be quick; it must
	// not use the Store. For metrics (tokenvault.Metrics.StoreCommit).
	OnCommit func(updates int, d time.Duration)

	// MaxSize, when positive, is the most bytes the file may grow to: a
	// commit that would need it longer fails with store.ErrFull (nothing
	// of it is written), like a full disk. Zero means no limit of its
	// own. Either way the file stays within the process's file size limit
	// (RLIMIT_FSIZE, read at Open): past it the file could not grow, and
	// the commit would fail with an error that does not say why.
	MaxSize int
}

// Store is a [store.Store] backed by a bbolt file.
type Store struct {
	db   *bbolt.DB
	path string

	// inflight counts Updates between entry and return, to decide whether
	// batching can pay off.
	inflight atomic.Int64

	gate store.Gate // Close waits for the transactions in progress

	group *groupCommitter // commits concurrent Updates together (groupcommit.go)
	// appends is the append log (appendlog.go).
	appends *appendLog
	// reserve keeps zeros written ahead of the file's high-water mark
	// (reserve.go); nil with NoSync.
	reserve *reserve

	// onCommit is Options.OnCommit. cur is the write transaction being
	// measured for it; bbolt runs one write transaction at a time, and
	// cur is only touched by the functions it runs, so it needs no lock.
	onCommit func(updates int, d time.Duration)
	curTx    *bbolt.Tx
	cur      *commitStat

	// pre is what the functions of the write transaction in progress
	// that have succeeded added to the writes done once per transaction
	// (store.PreCommit; preCommit). Like cur, it is touched only by the
	// one goroutine running a write transaction.
	pre precommit.Parts
}

// preStart empties pre at the start of a write transaction (or of an
// attempt of a batch run again): what an undone attempt added is gone.
func (s *Store) preStart() { s.pre.Reset() }

// preCommit does the writes that the functions of btx added parts to
// (store.PreCommit), once, after the last of them has returned.
func (s *Store) preCommit(btx *bbolt.Tx) error {
	b := btx.Bucket(bucketName)
	b.FillPercent = fillPercent
	t := &tx{b: b, path: s.path}
	defer t.finish()
	return s.pre.Write(t)
}

// commitStat measures one write transaction for Options.OnCommit.
type commitStat struct {
	updates int
	fnsDone time.Time // when the last Update function returned
}

// measure counts one Update function that ran in btx, registering the
// report when it is the first of btx. The functions of one transaction run
// one after another on one goroutine, and Commit runs after the last.
func (s *Store) measure(btx *bbolt.Tx, done time.Time) {
	if s.curTx != btx {
		c := &commitStat{}
		s.curTx, s.cur = btx, c
		btx.OnCommit(func() { s.onCommit(c.updates, time.Since(c.fnsDone)) })
	}
	s.cur.updates++
	s.cur.fnsDone = done
}

// Open opens or creates the bbolt file at path with mode 0600. It fails with
// an error wrapping bbolt's errors.ErrTimeout if another Store or process holds
// the file for longer than opts.Timeout, and with a *DamagedError
// (ErrDamaged) naming the file when the file is damaged: a header, page or
// length bbolt would panic or fault on, found by the checks of damage.go.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	timeout := o.Timeout
	switch {
	case timeout == 0:
		timeout = defaultTimeout
	case timeout < 0:
		timeout = 0 // bbolt: wait forever
	}
	limit := maxSize(o.MaxSize)
	// The map freelist (as etcd runs bbolt): the default array one finds
	// free pages by a scan linear in their number, which a large file
	// written at random keys (imported ids, index MACs) has many of; its
	// allocation was a measured share of a bulk import's commits
	// (BENCHMARKS.md, "Bulk import"). The file's format is the same: the
	// free list is written as before.
	db, err := openBolt(path, &bbolt.Options{Timeout: timeout, NoSync: o.NoSync, MaxSize: limit, FreelistType: bbolt.FreelistMapType})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("bolt: open %s: file is locked by another process or Store (waited %v): %w", path, timeout, err)
	}
	if errors.Is(err, ErrDamaged) {
		return nil, err
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return nil, &DamagedError{Path: path, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	if err := checkOpen(db, path); err != nil {
		db.Close()
		return nil, err
	}
	maxBatch := o.MaxBatchSize
	if maxBatch <= 0 {
		maxBatch = defaultMaxBatchSize
	}
	// Create the bucket only when missing: every read-write commit writes
	// a meta page, and opening an existing store must not change its file
	// (a Vault that refuses a wrong key leaves it as it was).
	var exists bool
	var r *reserve
	var appends *appendLog
	err = guard(path, nil, func() error {
		db.View(func(tx *bbolt.Tx) error {
			exists = tx.Bucket(bucketName) != nil
			return nil
		})
		if !exists {
			err := db.Update(func(tx *bbolt.Tx) error {
				_, err := tx.CreateBucketIfNotExists(bucketName)
				return err
			})
			if err != nil {
				return fmt.Errorf("bolt: open %s: create bucket: %w", path, full(err))
			}
		}
		if !o.NoSync {
			r = &reserve{path: path, max: int64(limit)}
			r.highWater.Store(highWater(db))
		}
		var err error
		appends, err = openAppendLog(db, path, o.NoSync)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, path: path, onCommit: o.OnCommit, reserve: r, appends: appends}
	s.group = newGroupCommitter(s, db, path, maxBatch, r)
	go appends.run(s.foldUpdate(context.Background()))
	return s, nil
}

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// begin registers a transaction so that Close waits for it.
func (s *Store) begin() error {
	if !s.gate.Enter() {
		return fmt.Errorf("bolt: %w", store.ErrClosed)
	}
	return nil
}

func (s *Store) end() { s.gate.Leave() }

// View runs fn in a bbolt read transaction. Reads never block on writers.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()

	var fnFailed, own bool
	err := guard(s.path, &own, func() error {
		return s.db.View(func(btx *bbolt.Tx) error {
			t := &tx{b: btx.Bucket(bucketName), path: s.path}
			defer t.finish()
			own = true
			err := fn(t)
			own = false
			fnFailed = err != nil
			return err
		})
	})
	if err != nil && !fnFailed {
		return fmt.Errorf("bolt: view: %w", err)
	}
	return err
}

// Update runs fn in a bbolt write transaction.
//
// bbolt allows one writer at a time and every commit costs an fsync, so
// concurrent Updates share transactions (groupcommit.go): they queue, and
// one committer runs everything queued in a single transaction with a
// single fsync as soon as the previous commit has ended, with no timer to
// wait for. When this is the only Update in flight it goes straight to
// DB.Update.
//
// fn may run more than once: if one fn in a shared transaction fails, the
// transaction rolls back, the failing fn is rerun on its own and the others
// are rerun together. The store.Store contract allows this. A panic in a
// shared fn is caught, and the fn is then rerun alone, where the panic
// propagates to the caller after the rollback. A caller whose ctx is done
// before its turn comes is answered without its fn running.
//
// ctx is checked when fn starts and again when it returns, and an error
// there rolls back. Once fn has returned nil the commit is not interrupted:
// in a batch, ctx being cancelled while the fns after this one run does not
// undo it.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	return full(s.update(ctx, fn, false))
}

// updateShared is Update through the group committer even when it is the
// only Update in flight: for tests of the shared path.
func (s *Store) updateShared(ctx context.Context, fn func(store.Tx) error) error {
	return s.update(ctx, fn, true)
}

func (s *Store) update(ctx context.Context, fn func(store.Tx) error, shared bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()

	// fnFailed tells fn's own error, returned as is, from bbolt's, which
	// is wrapped. It reflects the last run of fn: when that run fails,
	// bbolt returns its error unchanged.
	var fnFailed bool
	run := func(btx *bbolt.Tx) error {
		err := ctx.Err() // a batch may start well after Update was called
		var b *bbolt.Bucket
		if err == nil {
			b, err = bucketOf(btx, s.path)
		}
		if err == nil {
			b.FillPercent = fillPercent
			t := &tx{b: b, path: s.path}
			err = fn(t)
			t.finish()
			if err == nil {
				s.pre.Merge(&t.pre)
			}
		}
		if err == nil {
			err = ctx.Err()
		}
		fnFailed = err != nil
		if s.onCommit != nil {
			s.measure(btx, time.Now())
		}
		return err
	}

	var err error
	if s.inflight.Add(1) == 1 && !shared {
		err = s.updateSolo(run)
	} else {
		err = s.updateBatch(ctx, run)
	}
	if err != nil && !fnFailed && (ctx.Err() == nil || !errors.Is(err, ctx.Err())) {
		return fmt.Errorf("bolt: update: %w", err)
	}
	return err
}

// updateSolo and updateBatch decrement inflight with defer so that a panic
// in fn does not leave the count high and every later Update batched.
func (s *Store) updateSolo(run func(*bbolt.Tx) error) error {
	defer s.inflight.Add(-1)
	var own bool // run's panics are fn's; bbolt's become *DamagedError
	err := guard(s.path, &own, func() error {
		return s.db.Update(func(btx *bbolt.Tx) error {
			s.reserve.committed(btx)
			s.preStart()
			own = true
			err := run(btx)
			own = false
			if err == nil {
				err = s.preCommit(btx)
			}
			return err
		})
	})
	if err == nil && s.reserve.low() {
		s.reserve.grow(s.db)
	}
	return err
}

func (s *Store) updateBatch(ctx context.Context, run func(*bbolt.Tx) error) error {
	defer s.inflight.Add(-1)
	return s.group.update(ctx, run)
}

// Close waits for transactions in progress, then closes the file. Later View
// and Update calls return an error wrapping [store.ErrClosed]. Closing twice
// is not an error.
func (s *Store) Close() error {
	if !s.gate.Close() {
		return nil
	}
	s.appends.close()
	foldErr := s.appends.closeFold(func(fn func(*bbolt.Bucket) error) error {
		return guard(s.path, nil, func() error {
			return s.db.Update(func(btx *bbolt.Tx) error { return fn(btx.Bucket(bucketName)) })
		})
	})
	s.group.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("bolt: close %s: %w", s.path, err)
	}
	if foldErr != nil {
		return fmt.Errorf("bolt: close %s: appended entries stay for the next Open: %w", s.path, foldErr)
	}
	return nil
}

// Append writes entries to the append log and returns once it has synced
// them (see store.Appender; appendlog.go). They are folded into the file
// within about a tenth of a second, by Fold, or by the next Open after a
// crash. Concurrent Appends share one write and one sync.
func (s *Store) Append(ctx context.Context, entries []store.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if len(e.Key) == 0 {
			return fmt.Errorf("bolt: append: %w", berrors.ErrKeyRequired)
		}
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return full(s.appends.append(ctx, entries))
}

// Fold writes every entry appended so far into the file, in one
// transaction (see store.Appender).
func (s *Store) Fold(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return full(s.appends.fold(s.foldUpdate(ctx)))
}

// foldUpdate runs a fold's writes in an Update.
func (s *Store) foldUpdate(ctx context.Context) func(fn func(*bbolt.Bucket) error) error {
	return func(fn func(*bbolt.Bucket) error) error {
		return s.update(ctx, func(t store.Tx) error { return fn(t.(*tx).b) }, false)
	}
}

// SingleProcess marks the store as held by one process: bbolt locks its
// file for the process that opens it.
func (s *Store) SingleProcess() {}

// WriteSnapshot folds the append log, then writes the database file, as of one read transaction, to w
// (bbolt's Tx.WriteTo): a consistent copy taken while the store keeps
// serving, reads and writes alike (a long snapshot holds on to the pages
// it reads, so the file may grow meanwhile). The copy is a bbolt file that
// Open opens. A ctx that is done stops the copy at the next write to w.
func (s *Store) WriteSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	// What was appended before the snapshot began is in it.
	if err := s.appends.fold(s.foldUpdate(ctx)); err != nil {
		return 0, fmt.Errorf("bolt: snapshot: %w", err)
	}
	var n int64
	err := guard(s.path, nil, func() error {
		return s.db.View(func(btx *bbolt.Tx) error {
			var err error
			n, err = btx.WriteTo(ctxWriter{ctx, w})
			return err
		})
	})
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, fmt.Errorf("bolt: snapshot: %w", err)
	}
	return n, nil
}

// ctxWriter fails writes once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// Check opens the file at path read-only and reports whether it is a
// sound database of this package: a bbolt file whose pages pass bbolt's
// consistency check (Tx.Check, which reads the whole file) and that holds
// the store's bucket. It changes nothing, and fails, like Open, if another
// process holds the file. For checking backups before they are kept or
// restored.
func Check(path string) error {
	// bbolt maps the file and trusts its header: a truncated copy makes
	// it fault (SIGBUS) past the end, which no error return can catch.
	if err := checkHeader(path); err != nil {
		return err
	}
	db, err := openBolt(path, &bbolt.Options{ReadOnly: true, Timeout: defaultTimeout})
	if err != nil {
		return fmt.Errorf("bolt: %s is not a readable bbolt database: %w", path, err)
	}
	defer db.Close()
	return guard(path, nil, func() error {
		return db.View(func(tx *bbolt.Tx) error {
			var errs []error
			for err := range tx.Check() {
				errs = append(errs, checkError(err))
			}
			if len(errs) > 0 {
				return fmt.Errorf("bolt: %s fails bbolt's consistency check: %w", path, errors.Join(errs...))
			}
			if tx.Bucket(bucketName) == nil {
				return fmt.Errorf("bolt: %s is a bbolt database, but not a store of this package (no %q bucket)", path, bucketName)
			}
			return nil
		})
	})
}

// bbolt's file header: two meta pages (pages 0 and 1), each a 16-byte page
// header then the meta: magic, version, page size, flags (4 bytes each),
// root bucket (16), freelist page, high-water page id, txid, and the
// FNV-64a checksum of the meta's bytes before it.
const (
	boltMagic    = 0xED0CDAED
	boltVersion  = 2
	metaStart    = 16
	metaChecksum = metaStart + 56
	metaEnd      = metaChecksum + 8
)

// checkLength reads the newest valid meta page of the bbolt file at path
// and checks that the file holds every page it names.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	type meta struct{ pageSize, root, freelist, pgid, txid uint64 }
	read := func(off int64) (meta, bool) {
		b := make([]byte, metaEnd)
		if _, err := f.ReadAt(b, off); err != nil {
			return meta{}, false
		}
		u32 := func(i int) uint32 { return binary.NativeEndian.Uint32(b[i:]) }
		u64 := func(i int) uint64 { return binary.NativeEndian.Uint64(b[i:]) }
		h := fnv.New64a()
		h.Write(b[metaStart:metaChecksum])
		if u32(metaStart) != boltMagic || u32(metaStart+4) != boltVersion || u64(metaChecksum) != h.Sum64() {
			return meta{}, false
		}
		return meta{pageSize: uint64(u32(metaStart + 8)), root: u64(metaStart + 16), freelist: u64(metaStart + 32),
			pgid: u64(metaStart + 40), txid: u64(metaStart + 48)}, true
	}
	m0, ok0 := read(0)
	second := int64(os.Getpagesize())
	if ok0 {
		second = int64(m0.pageSize)
	}
	m1, ok1 := read(second)
	best, ok := m0, ok0
	if ok1 && (!ok0 || m1.txid > m0.txid) {
		best, ok = m1, true
	}
	if !ok || best.pageSize == 0 {
		return fmt.Errorf("bolt: %s is not a bbolt database (no valid header)", path)
	}
	if need := best.pgid * best.pageSize; uint64(fi.Size()) < need {
		return fmt.Errorf("bolt: %s is truncated: %d bytes, its header names %d", path, fi.Size(), need)
	}
	// A page starts with its id (8 bytes) and flags (2).
	page := func(what string, id uint64, flags ...uint16) error {
		if id < 2 || id >= best.pgid {
			return fmt.Errorf("bolt: %s names page %d as its %s, outside its %d pages", path, id, what, best.pgid)
		}
		b := make([]byte, 10)
		if _, err := f.ReadAt(b, int64(id*best.pageSize)); err != nil {
			return fmt.Errorf("bolt: %w", err)
		}
		got := binary.NativeEndian.Uint16(b[8:])
		if binary.NativeEndian.Uint64(b) != id || !slices.Contains(flags, got) {
			return fmt.Errorf("bolt: %s: page %d, its %s, is not one (page flags %#x)", path, id, what, got)
		}
		return nil
	}
	if best.freelist != noFreelist {
		if err := page("freelist", best.freelist, freelistPage); err != nil {
			return err
		}
	}
	return page("root", best.root, branchPage, leafPage)
}

// bbolt's page flags, and the freelist id of a file that keeps none.
const (
	branchPage   = 0x01
	leafPage     = 0x02
	freelistPage = 0x10
	noFreelist   = 0xffffffffffffffff
)
