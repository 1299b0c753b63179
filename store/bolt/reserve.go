package bolt

import (
	"errors"
	"os"
	"sync/atomic"

	"go.etcd.io/bbolt"
)

// The file's reserve.
//
// bbolt grows its file with ftruncate, which leaves a hole, and every
// commit appending pages past its high-water mark writes into that hole.
// The commit's fdatasync then has to allocate the blocks and commit the
// file system's journal as well as write the data, and on ext4 that is
// what made the fsyncs slow when the CPUs are busy: two fdatasyncs after
// appending a page took 0.73–1.20 ms with two busy CPUs, against 0.43–0.61
// ms when the page had been written before (BENCHMARKS.md).
//
// So the committer keeps zeros written and synced ahead of the high-water
// mark, reserveChunk at a time when fewer than reserveLow bytes are left:
// commits then overwrite blocks the file already has. The zeros go only
// past the high-water mark (pages bbolt has never handed out, which no
// transaction reads), and only while the committer holds bbolt's writer
// lock, in a write transaction it then rolls back: no commit can be
// writing pages there meanwhile. bbolt sees a longer file, as after its
// own growth, and does not truncate it while it is long enough. A failure
// (a full disk) switches the reserve off: bbolt then grows the file as it
// always did. Commits that append more than smallCommit (batches of
// tokens) do not grow the reserve: they pay the journal once for many
// pages, and zeros would only make them write twice. Stores opened with NoSync have no reserve.

const (
	reserveChunk = 2 << 20
	reserveLow   = 1 << 20
	// smallCommit is the most a commit may append for the reserve to grow.
	smallCommit = 256 << 10
)

// zeroBlock is what reserve writes, a block at a time.
var zeroBlock [256 << 10]byte

// errReserved rolls back the transaction that holds the writer lock while
// reserve writes.
var errReserved = errors.New("bolt: reserve written")

// reserve is the zeros written ahead of the high-water mark.
type reserve struct {
	path string
	// max is the file's size limit (Options.MaxSize), 0 for none: the
	// zeros stay within it, leaving the room for pages.
	max int64
	// highWater is about the file's high-water mark: bbolt's Tx.Size as
	// the latest committed transaction began (its own pages are not in
	// it, which only makes the reserve grow a commit later). grow takes
	// the exact mark.
	highWater atomic.Int64
	// growth is how much the high-water mark grew between the last two
	// commits. Commits that append much (batches) pay the journal once
	// for many pages, and zeros would only make them write twice: the
	// reserve grows only while commits are small.
	growth atomic.Int64
	// end is where the zeros written so far end; off is set by a failure.
	end atomic.Int64
	off atomic.Bool
}

// committed records tx's high-water mark once it commits.
func (r *reserve) committed(tx *bbolt.Tx) {
	if r != nil {
		size := tx.Size() // tx is closed when OnCommit functions run
		tx.OnCommit(func() { r.growth.Store(size - r.highWater.Swap(size)) })
	}
}

// low reports whether the reserve should grow.
func (r *reserve) low() bool {
	return r != nil && !r.off.Load() && r.growth.Load() < smallCommit && r.end.Load()-r.highWater.Load() < reserveLow
}

// grow writes reserveChunk more zeros past the high-water mark, holding
// db's writer lock (so calls are serialized too).
func (r *reserve) grow(db *bbolt.DB) {
	err := db.Update(func(tx *bbolt.Tx) error {
		if !r.low() {
			return errReserved // another call grew it meanwhile
		}
		from := max(r.end.Load(), tx.Size())
		if r.max > 0 && from+reserveChunk > r.max {
			return errors.New("bolt: no room for the reserve within the size limit")
		}
		if err := r.write(from, from+reserveChunk); err != nil {
			return err
		}
		r.end.Store(from + reserveChunk)
		return errReserved
	})
	if !errors.Is(err, errReserved) {
		r.off.Store(true)
	}
}

// write writes zeros over [from, to) of the file and syncs them.
func (r *reserve) write(from, to int64) error {
	f, err := os.OpenFile(r.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for off := from; off < to; off += int64(len(zeroBlock)) {
		if _, err := f.WriteAt(zeroBlock[:min(int64(len(zeroBlock)), to-off)], off); err != nil {
			return err
		}
	}
	return f.Sync()
}

// highWater is db's high-water mark as the last commit left it.
func highWater(db *bbolt.DB) int64 {
	var size int64
	db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		return nil
	})
	return size
}
