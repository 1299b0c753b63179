package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/groupqueue"
)

// The append log (store.Appender). A commit of bbolt costs its page writes
// and two fsyncs, and its CPU, however little it carries: a Vault under
// reads paid one commit for every group of audit lines. Appended entries
// instead go to a segment file beside the database, each caller's entries
// as one checksummed frame; one writer goroutine writes everything queued
// with one write and one fdatasync, and then acknowledges each caller
// (never before: an entry is durable when Append returns). Every
// foldInterval, or as soon as foldAt entries wait, the store folds them
// into the database in one transaction, sorted, and removes the segment.
//
// Segments are named <file>.appends.<n>, n increasing. A fold first makes
// a new segment current (created and its directory synced before any
// entry goes to it), so that the folded one is complete and can be
// removed once the fold has committed. Open folds whatever segments a
// crash left, in order, and removes them: a frame cut short by the crash
// (its write was never acknowledged) and everything after it in its
// segment are ignored. A crash between a fold's commit and its segment's
// removal leaves the segment to be folded again: Open puts its entries
// only where their keys are absent (putAbsent), since an appended key is
// new by construction and one present was folded before, and may have
// been written since (the audit chain writes a line again with its link:
// putting the appended value back would unchain it). An entry removed
// since is put again.

const (
	// foldInterval bounds how long an appended entry waits to be folded
	// when nobody asks for it (Fold). Longer gives larger, cheaper folds
	// and more to replay after a crash.
	foldInterval = 250 * time.Millisecond
	// foldAt is how many waiting entries start a fold before the interval.
	foldAt = 16384
	// maxUnfolded bounds the entries kept in memory for folding (each is a
	// few hundred bytes): while that many wait, because folds fail, Append
	// fails and callers fall back to Update.
	maxUnfolded = 64 << 10
	// frameHeader is a frame's payload length and CRC-32C, 4 bytes each.
	frameHeader = 8
	// maxFrame bounds a frame's payload when reading a segment, against a
	// corrupt length.
	maxFrame = 64 << 20
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// errUnfoldedFull is what Append returns while maxUnfolded entries
	// wait to be folded.
	errUnfoldedFull = errors.New("bolt: append: too many entries wait to be folded")
)

// appendLog is a Store's append log.
type appendLog struct {
	path   string // the database file's; segments are path.appends.<n>
	noSync bool
	queue  *groupqueue.Queue[*appendCall]

	// mu guards the current segment and what was written to it. The
	// writer holds it while it writes a group, so a group lies in one
	// segment.
	mu      sync.Mutex
	seg     *os.File
	nextSeq uint64
	entries []store.Entry // acknowledged in seg
	synced  int64         // the length of seg's acknowledged frames
	// failed is the error of a write or sync of seg: what it holds is
	// unknown, so no more is written to it (appends fail) until a fold
	// makes a new segment current.
	failed error
	// waiting counts the entries of entries and backlog.
	waiting int

	// foldMu makes folds take turns; backlog (guarded by it) holds the
	// segments made not current and not yet folded.
	foldMu  sync.Mutex
	backlog []*os.File
	// unsynced (guarded by foldMu) says that folded segments were removed
	// but the directory's sync failed: a fold succeeds only once it has
	// synced, lest a crash bring them back after lines were removed.
	unsynced bool
	pending  [][]store.Entry // the entries of backlog's segments

	kick chan struct{} // a fold is wanted now (capacity 1)
	stop chan struct{}
	done chan struct{}
}

// appendCall is one Append waiting for the writer.
type appendCall struct {
	ctx     context.Context
	entries []store.Entry
	err     error
	done    chan struct{}
}

// segmentPath is the path of segment n of the database at path.
func segmentPath(path string, n uint64) string {
	return path + ".appends." + strconv.FormatUint(n, 10)
}

// segments returns the segment numbers present for the database at path,
// in order.
func segments(path string) ([]uint64, error) {
	dirents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	prefix := filepath.Base(path) + ".appends."
	var out []uint64
	for _, d := range dirents {
		rest, ok := strings.CutPrefix(d.Name(), prefix)
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(rest, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// openAppendLog folds the segments a previous run left into db, removes
// them, and starts an empty log.
func openAppendLog(db *bbolt.DB, path string, noSync bool) (*appendLog, error) {
	seqs, err := segments(path)
	if err != nil {
		return nil, fmt.Errorf("bolt: append log: %w", err)
	}
	var left []store.Entry
	for _, n := range seqs {
		b, err := os.ReadFile(segmentPath(path, n))
		if err != nil {
			return nil, fmt.Errorf("bolt: append log: %w", err)
		}
		left = append(left, readFrames(b)...)
	}
	if len(left) > 0 {
		if err := db.Update(func(btx *bbolt.Tx) error {
			return putAbsent(btx.Bucket(bucketName), left)
		}); err != nil {
			return nil, fmt.Errorf("bolt: append log: fold what the last run left: %w", err)
		}
	}
	l := &appendLog{path: path, noSync: noSync, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	if len(seqs) > 0 {
		l.nextSeq = seqs[len(seqs)-1] + 1
		for _, n := range seqs {
			if err := os.Remove(segmentPath(path, n)); err != nil {
				return nil, fmt.Errorf("bolt: append log: %w", err)
			}
		}
	}
	if l.seg, err = l.create(); err != nil {
		return nil, err
	}
	l.queue = groupqueue.New(defaultMaxBatchSize, l.write)
	return l, nil
}

// create creates the next segment and syncs its directory, so that the
// file outlives a crash once something in it is synced.
func (l *appendLog) create() (*os.File, error) {
	f, err := os.OpenFile(segmentPath(l.path, l.nextSeq), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("bolt: append log: %w", err)
	}
	l.nextSeq++
	if err := l.syncDir(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func (l *appendLog) syncDir() error {
	if l.noSync {
		return nil
	}
	d, err := os.Open(filepath.Dir(l.path))
	if err != nil {
		return fmt.Errorf("bolt: append log: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("bolt: append log: sync directory: %w", err)
	}
	return nil
}

// append queues entries for the writer and waits for their sync.
func (l *appendLog) append(ctx context.Context, entries []store.Entry) error {
	c := &appendCall{ctx: ctx, entries: copyEntries(entries), done: make(chan struct{})}
	l.queue.Add(c)
	<-c.done
	return c.err
}

// copyEntries copies entries into one allocation.
func copyEntries(entries []store.Entry) []store.Entry {
	n := 0
	for _, e := range entries {
		n += len(e.Key) + len(e.Value)
	}
	buf := make([]byte, 0, n)
	out := make([]store.Entry, len(entries))
	for i, e := range entries {
		buf = append(buf, e.Key...)
		out[i].Key = buf[len(buf)-len(e.Key):]
		buf = append(buf, e.Value...)
		out[i].Value = buf[len(buf)-len(e.Value):]
	}
	return out
}

// write is the writer: it writes the frames of a group of calls with one
// write and one fdatasync, then answers them.
func (l *appendLog) write(batch []*appendCall) {
	live := batch[:0:0]
	entries, size := 0, 0
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.finish(err)
			continue
		}
		live = append(live, c)
		entries += len(c.entries)
		size += frameSize(c.entries)
	}
	if len(live) == 0 {
		return
	}
	frames := make([]byte, 0, size)
	for _, c := range live {
		frames = appendFrame(frames, c.entries)
	}
	l.mu.Lock()
	err := l.failed
	if err == nil && l.waiting+entries > maxUnfolded {
		err = errUnfoldedFull
	}
	if err == nil {
		_, err = l.seg.Write(frames)
		if err == nil && !l.noSync {
			err = fdatasync(l.seg)
		}
		if err != nil {
			err = fmt.Errorf("bolt: append: %w", err)
			l.failed = err
			// These callers are refused, and may write other lines
			// instead: their frames must not be replayed after a
			// crash. (If this fails too, they may be: a line of a
			// refused read, never a lost one.)
			if l.seg.Truncate(l.synced) == nil && !l.noSync {
				fdatasync(l.seg)
			}
		} else {
			l.synced += int64(len(frames))
		}
	}
	if err == nil {
		for _, c := range live {
			l.entries = append(l.entries, c.entries...)
			l.waiting += len(c.entries)
		}
	}
	wantFold := err != nil || len(l.entries) >= foldAt
	l.mu.Unlock()
	for _, c := range live {
		c.finish(err)
	}
	if wantFold {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

func (c *appendCall) finish(err error) {
	c.err = err
	close(c.done)
}

// frameSize is the length of appendFrame's frame of entries.
func frameSize(entries []store.Entry) int {
	n := frameHeader + uvarintLen(len(entries))
	for _, e := range entries {
		n += uvarintLen(len(e.Key)) + len(e.Key) + uvarintLen(len(e.Value)) + len(e.Value)
	}
	return n
}

// uvarintLen is the length of binary.AppendUvarint's encoding of n.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// appendFrame appends to b the frame of one call's entries: its payload's
// length and CRC-32C, then the count of entries and each key and value
// with its length.
func appendFrame(b []byte, entries []store.Entry) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0) // frameHeader, filled in below
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(len(e.Key)))
		b = append(b, e.Key...)
		b = binary.AppendUvarint(b, uint64(len(e.Value)))
		b = append(b, e.Value...)
	}
	payload := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// readFrames returns the entries of the whole frames at the start of b: it
// stops at the first frame that is cut short, fails its checksum or does
// not parse (a write a crash interrupted, never acknowledged).
func readFrames(b []byte) []store.Entry {
	var out []store.Entry
	for len(b) >= frameHeader {
		n := binary.LittleEndian.Uint32(b)
		if n > maxFrame || uint64(len(b)-frameHeader) < uint64(n) {
			break
		}
		payload := b[frameHeader : frameHeader+n]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
			break
		}
		entries, ok := parseFrame(payload)
		if !ok {
			break
		}
		out = append(out, entries...)
		b = b[frameHeader+n:]
	}
	return out
}

// parseFrame parses a frame's payload; false if it is not one.
func parseFrame(p []byte) ([]store.Entry, bool) {
	count, k := binary.Uvarint(p)
	if k <= 0 || count > uint64(len(p)) {
		return nil, false
	}
	p = p[k:]
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		v := p[k : k+int(n)]
		p = p[k+int(n):]
		return v, true
	}
	out := make([]store.Entry, 0, min(count, uint64(len(p)/3))) // an entry takes 3 bytes at least
	for range count {
		key, ok := next()
		if !ok || len(key) == 0 {
			return nil, false
		}
		value, ok := next()
		if !ok {
			return nil, false
		}
		out = append(out, store.Entry{Key: key, Value: value})
	}
	return out, len(p) == 0
}

// putSorted puts entries into b in key order (the order bbolt inserts
// fastest).
func putSorted(b *bbolt.Bucket, entries []store.Entry) error {
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].Key, entries[j].Key) < 0 })
	b.FillPercent = fillPercent
	for _, e := range entries {
		v := e.Value
		if v == nil {
			v = []byte{}
		}
		if err := b.Put(e.Key, v); err != nil {
			return err
		}
	}
	return nil
}

// putAbsent is putSorted for the entries of segments a crash left, which
// may have been folded already: it puts only those whose keys b lacks.
func putAbsent(b *bbolt.Bucket, entries []store.Entry) error {
	absent := entries[:0:0]
	for _, e := range entries {
		if b.Get(e.Key) == nil {
			absent = append(absent, e)
		}
	}
	return putSorted(b, absent)
}

// fold makes a new segment current (when the current one holds anything
// or has failed), then writes every entry of the segments made not current
// into the database with update, in one transaction, and removes their
// files. On an error the segments stay in the backlog for the next fold.
func (l *appendLog) fold(update func(fn func(*bbolt.Bucket) error) error) error {
	l.foldMu.Lock()
	defer l.foldMu.Unlock()
	l.mu.Lock()
	rotate := len(l.entries) > 0 || l.failed != nil
	l.mu.Unlock()
	if rotate {
		next, err := l.create()
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.backlog = append(l.backlog, l.seg)
		l.pending = append(l.pending, l.entries)
		// The next segment's entries will likely be as many (up to a
		// fold's worth: a burst does not keep its room for good).
		l.seg, l.entries, l.failed, l.synced = next, make([]store.Entry, 0, min(cap(l.entries), foldAt)), nil, 0
		l.mu.Unlock()
	}
	if len(l.backlog) == 0 {
		if l.unsynced {
			return l.syncRemovals()
		}
		return nil
	}
	var all []store.Entry
	for _, p := range l.pending {
		all = append(all, p...)
	}
	if len(all) > 0 {
		if err := update(func(b *bbolt.Bucket) error { return putSorted(b, all) }); err != nil {
			return err
		}
	}
	for _, f := range l.backlog {
		f.Close()
		if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("bolt: append log: %w", err)
		}
	}
	l.backlog, l.pending = nil, nil
	l.mu.Lock()
	l.waiting -= len(all)
	l.mu.Unlock()
	// A crash before this sync may leave the removed files; Open then
	// puts their entries again, unchanged.
	l.unsynced = true
	return l.syncRemovals()
}

// syncRemovals syncs the directory after segments were removed.
func (l *appendLog) syncRemovals() error {
	if err := l.syncDir(); err != nil {
		return err
	}
	l.unsynced = false
	return nil
}

// run folds every foldInterval while entries wait, and when kicked, until
// stop is closed. A failed fold is tried again at the next turn.
func (l *appendLog) run(update func(fn func(*bbolt.Bucket) error) error) {
	defer close(l.done)
	t := time.NewTicker(foldInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.kick:
		}
		l.mu.Lock()
		idle := l.waiting == 0 && l.failed == nil
		l.mu.Unlock()
		if idle {
			continue
		}
		l.fold(update)
	}
}

// close stops the folder and the writer; the Store then folds the rest
// (closeFold) before it closes the database.
func (l *appendLog) close() {
	close(l.stop)
	<-l.done
	l.queue.Close()
}

// closeFold folds what is left and removes the current segment, which no
// Append can reach any more. On an error the segments stay for Open.
func (l *appendLog) closeFold(update func(fn func(*bbolt.Bucket) error) error) error {
	if err := l.fold(update); err != nil {
		l.seg.Close()
		return err
	}
	l.seg.Close()
	if err := os.Remove(l.seg.Name()); err != nil {
		return fmt.Errorf("bolt: append log: %w", err)
	}
	return l.syncDir()
}
