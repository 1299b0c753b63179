package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/precommit"
)

const (
	// pageSize is how many rows one Scan query fetches. Scan holds one
	// page in memory at a time.
	pageSize = 256
	// maxPending is how many buffered writes force a round trip before the
	// next read or the commit would send them anyway.
	maxPending = 1000
)

var (
	errReadOnly   = errors.New("postgres: write in a read-only transaction")
	errTxDone     = errors.New("postgres: transaction used after it ended")
	errEmptyKey   = errors.New("postgres: empty key")
	errScanWriter = errors.New("postgres: write during Scan callback")
)

// write is a buffered Put, or a Delete when del is set.
type write struct {
	key, value []byte
	del        bool
}

// tx is a store.Tx on one PostgreSQL transaction.
//
// Nothing is sent until it must be. BEGIN is sent with the first statement;
// writes are buffered and sent, in order, in one pipelined batch together
// with the next read, or with COMMIT. The database applies them before the
// read, so reads see every earlier write of the transaction, and a
// transaction costs one round trip per read plus one for the commit. The
// price is that a write the database refuses (say, a key too long for the
// index) fails the next Get or Scan, or the commit, rather than the Put.
type tx struct {
	s        *Store
	ctx      context.Context
	conn     *pgxpool.Conn
	writable bool
	done     bool
	scanning int // nesting depth of Scan calls in progress

	// begin holds the statements that open the transaction until they
	// have been sent. The generation is read with them.
	begin   []string
	pending []write
	// err is the first statement failure. PostgreSQL aborts the
	// transaction at the first error, so every later call fails with it.
	err error

	// gen is the generation as of the snapshot, read with BEGIN;
	// advanced counts the advances of the functions that have finished
	// (and, in a shared transaction, succeeded), fnAdvanced those of the
	// function running. The commit adds both to the stored counter.
	gen                  uint64
	advanced, fnAdvanced uint64

	// A shared transaction (group commit, groupcommit.go) runs the
	// functions of several Updates one after the other.
	group bool
	// callCtx is the running function's caller's context: checked before
	// each call, while the statements use the transaction's own ctx.
	callCtx context.Context
	// mark is where the running function's writes begin in pending.
	mark int
	// savepoint is set once a SAVEPOINT before the running function's
	// first sent write has been executed: its writes can then be rolled
	// back alone.
	savepoint bool
	// prefix holds statements to send before anything else in the next
	// round trip: savepoint releases and rollbacks of finished functions.
	prefix []string
	// pre is what the functions that have succeeded (or the one function
	// of a transaction of its own) added to the writes done once per
	// transaction (store.PreCommit), written before COMMIT.
	pre precommit.Parts
}

// AddPreCommit adds part to w's write, done before COMMIT (a transaction
// of its own: Store.attempt).
func (t *tx) AddPreCommit(w store.PreCommitWrite, part any) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	t.pre.Add(w, part)
	return nil
}

func (t *tx) check() error {
	if t.done {
		return errTxDone
	}
	if t.err != nil {
		return t.err
	}
	if t.callCtx != nil {
		return t.callCtx.Err()
	}
	return nil
}

func (t *tx) checkWrite() error {
	if err := t.check(); err != nil {
		return err
	}
	switch {
	case !t.writable:
		return errReadOnly
	case t.scanning > 0:
		// The contract forbids it; a write ahead of the scan position
		// would show up in a later page.
		return errScanWriter
	}
	return nil
}

// flush sends the buffered writes, if any.
func (t *tx) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	return t.roundTrip("write", "", nil, nil, false)
}

// commit sends the buffered writes and COMMIT. A transaction that sent
// nothing and has nothing to send was never opened: there is nothing to do.
func (t *tx) commit() error {
	if t.begin != nil && len(t.pending) == 0 && t.advanced+t.fnAdvanced == 0 {
		return nil
	}
	return t.roundTrip("commit", "", nil, nil, true)
}

// Generation returns the generation read with BEGIN, sending BEGIN now if
// nothing has been sent yet (one round trip, which the first read would
// have cost anyway), and whether the transaction has advanced it.
func (t *tx) Generation() (uint64, bool, error) {
	if err := t.check(); err != nil {
		return 0, false, err
	}
	if t.begin != nil {
		if err := t.roundTrip("begin", "", nil, nil, false); err != nil {
			return 0, false, err
		}
	}
	return t.gen, t.advanced+t.fnAdvanced > 0, nil
}

// AdvanceGeneration counts an advance, added to the stored counter by the
// statement that goes with COMMIT.
func (t *tx) AdvanceGeneration() error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	t.fnAdvanced++
	return nil
}

// roundTrip sends, in one batch, the statements opening the transaction if
// they have not been sent (with the generation read), the prefix
// statements, the buffered writes, query (if not empty) and the generation
// advance and COMMIT if commit is set. It passes the query's rows to read.
// A failure is recorded in t.err, as the database transaction is now
// aborted.
//
// In a shared transaction, the running function's own writes are preceded
// by a SAVEPOINT the first time they are sent, so that they can be rolled
// back without the writes of the functions before it.
func (t *tx) roundTrip(op, query string, args []any, read func(pgx.Rows) error, commit bool) error {
	b := &pgx.Batch{}
	for _, q := range t.begin {
		b.Queue(q)
	}
	readGen := t.begin != nil
	if readGen {
		b.Queue(t.s.sql.getGen)
	}
	for _, q := range t.prefix {
		b.Queue(q)
	}
	earlier, own := t.pending, []write(nil)
	if t.group && !t.savepoint && !commit {
		earlier, own = t.pending[:t.mark], t.pending[t.mark:]
	}
	writes := t.queueWrites(b, earlier)
	savepointAt := -1 // the SAVEPOINT's index among the write statements
	if len(own) > 0 {
		savepointAt = writes
		b.Queue("SAVEPOINT f")
		writes += 1 + t.queueWrites(b, own)
	}
	if query != "" {
		b.Queue(query, args...)
	}
	advance := commit && t.advanced+t.fnAdvanced > 0
	if advance {
		b.Queue(t.s.sql.advanceGen, int64(t.advanced+t.fnAdvanced))
	}
	if commit {
		b.Queue("COMMIT")
	}
	br := t.conn.SendBatch(t.ctx, b)
	err := func() error {
		for range len(t.begin) {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if readGen {
			var gen int64
			if err := br.QueryRow().Scan(&gen); err != nil {
				return err
			}
			t.gen = uint64(gen)
		}
		for range len(t.prefix) {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		for i := range writes {
			if _, err := br.Exec(); err != nil {
				return err
			}
			if i == savepointAt {
				t.savepoint = true
			}
		}
		if query != "" {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			defer rows.Close()
			if err := read(rows); err != nil {
				return err
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		if advance {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if commit {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			// COMMIT of a failed transaction answers ROLLBACK.
			if tag.String() != "COMMIT" {
				return pgx.ErrTxCommitRollback
			}
		}
		return nil
	}()
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	t.begin, t.pending, t.prefix, t.mark = nil, nil, nil, 0
	if err != nil {
		if ctxErr := t.ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		t.err = t.s.wrap(op, err)
		return t.err
	}
	return nil
}

// queueWrites queues statements applying writes and returns how many it
// queued. One write is one plain statement. More are
// coalesced to the last write of each key and sent as at most two
// statements taking arrays: a DELETE and a multi-row upsert, in key order,
// so that concurrent transactions lock rows in the same order.
func (t *tx) queueWrites(b *pgx.Batch, writes []write) int {
	switch len(writes) {
	case 0:
		return 0
	case 1:
		if w := writes[0]; w.del {
			b.Queue(t.s.sql.del, w.key)
		} else {
			b.Queue(t.s.sql.put, w.key, w.value)
		}
		return 1
	}
	last := make(map[string]int, len(writes))
	for i, w := range writes {
		last[string(w.key)] = i
	}
	final := make([]write, 0, len(last))
	for i, w := range writes {
		if last[string(w.key)] == i {
			final = append(final, w)
		}
	}
	slices.SortFunc(final, func(a, b write) int { return bytes.Compare(a.key, b.key) })
	var delKeys, putKeys, putValues [][]byte
	for _, w := range final {
		if w.del {
			delKeys = append(delKeys, w.key)
		} else {
			putKeys = append(putKeys, w.key)
			putValues = append(putValues, w.value)
		}
	}
	n := 0
	if len(delKeys) > 0 {
		b.Queue(t.s.sql.delMany, delKeys)
		n++
	}
	if len(putKeys) > 0 {
		b.Queue(t.s.sql.putMany, putKeys, putValues)
		n++
	}
	return n
}

// Get returns a copy of the stored value; an empty value is a non-nil empty
// slice.
func (t *tx) Get(key []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if len(key) == 0 {
		// Empty keys cannot be stored; no need to ask.
		return nil, nil
	}
	var value []byte
	found := false
	err := t.roundTrip("get", t.s.sql.get, []any{key}, func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&value); err != nil {
				return err
			}
		}
		return nil
	}, false)
	if err != nil || !found {
		return nil, err
	}
	if value == nil {
		value = []byte{}
	}
	return value, nil
}

// Put buffers a copy of key and value. Empty keys are rejected, as bbolt
// rejects them.
func (t *tx) Put(key, value []byte) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	if len(key) == 0 {
		return errEmptyKey
	}
	// Copies: the caller may reuse its slices at once. A nil value must
	// become an empty one, or pgx would send NULL.
	t.pending = append(t.pending, write{key: bytes.Clone(key), value: append([]byte{}, value...)})
	if len(t.pending) >= maxPending {
		return t.flush()
	}
	return nil
}

// Delete buffers the deletion of key; a missing key is a no-op.
func (t *tx) Delete(key []byte) error {
	if err := t.checkWrite(); err != nil {
		return err
	}
	if len(key) == 0 {
		return nil
	}
	t.pending = append(t.pending, write{key: bytes.Clone(key), del: true})
	if len(t.pending) >= maxPending {
		return t.flush()
	}
	return nil
}

// pair is one row of a Scan page.
type pair struct{ key, value []byte }

// Scan reads the range in pages of at most pageSize rows, each an index
// range scan on the primary key that continues after the last key of the
// page before. A page is read in full and its result closed before fn sees
// any of its rows, so fn may call Get.
func (t *tx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	if err := t.check(); err != nil {
		return err
	}
	lower := prefix
	if lower == nil {
		lower = []byte{} // nil would be sent as NULL, which matches nothing
	}
	upper, bounded := prefixEnd(prefix)
	var cursor []byte // exclusive lower bound; nil means none
	if after != nil && bytes.Compare(after, prefix) >= 0 {
		cursor = after
	}
	return t.scanPages(limit, fn, func(n int) (string, []any) {
		args := []any{lower, int64(n)}
		u, a := 0, 0
		if bounded {
			args = append(args, upper)
			u = 1
		}
		if cursor != nil {
			args = append(args, cursor)
			a = 1
		}
		return t.s.sql.scan[u][a], args
	}, func(last []byte) { cursor = last })
}

// ScanReverse is Scan in descending order: pages of at most pageSize
// rows, each an index range scan on the primary key, backwards, that
// continues before the last key of the page before.
func (t *tx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	if err := t.check(); err != nil {
		return err
	}
	lower := prefix
	if lower == nil {
		lower = []byte{}
	}
	upper, bounded := prefixEnd(prefix) // exclusive
	if before != nil && (!bounded || bytes.Compare(before, upper) < 0) {
		upper, bounded = before, true
	}
	return t.scanPages(limit, fn, func(n int) (string, []any) {
		if bounded {
			return t.s.sql.scanDesc[1], []any{lower, int64(n), upper}
		}
		return t.s.sql.scanDesc[0], []any{lower, int64(n)}
	}, func(last []byte) { upper, bounded = last, true })
}

// scanPages runs the pages of a Scan or ScanReverse: query gives the
// statement and arguments of a page of at most n rows, from where the
// last page ended, which continue is told (a copy of its last key: the
// next page must continue from the key as read, even if fn scribbled on
// its slice against the contract). It stops after limit rows (0: none),
// at a short page, or when fn returns store.ErrStop.
func (t *tx) scanPages(limit int, fn func(key, value []byte) error, query func(n int) (string, []any), continueFrom func(last []byte)) error {
	if limit < 0 {
		limit = 0
	}
	t.scanning++
	defer func() { t.scanning-- }()
	visited := 0
	var page []pair
	for {
		n := pageSize
		if limit > 0 {
			n = min(n, limit-visited)
		}
		sql, args := query(n)
		page = page[:0]
		err := t.roundTrip("scan", sql, args, func(rows pgx.Rows) error {
			for rows.Next() {
				var p pair
				if err := rows.Scan(&p.key, &p.value); err != nil {
					return err
				}
				page = append(page, p)
			}
			return nil
		}, false)
		if err != nil {
			return err
		}
		for _, p := range page {
			if p.value == nil {
				p.value = []byte{}
			}
			if err := fn(p.key, p.value); err != nil {
				if errors.Is(err, store.ErrStop) {
					return nil
				}
				return err
			}
		}
		visited += len(page)
		if len(page) < n || (limit > 0 && visited >= limit) {
			return nil
		}
		continueFrom(bytes.Clone(page[len(page)-1].key))
	}
}

// prefixEnd returns the least key greater than every key beginning with
// prefix: prefix with its last byte below 0xff incremented and the rest cut
// off. It reports false when there is none (the prefix is empty or all
// 0xff), in which case the range has no upper bound.
func prefixEnd(prefix []byte) ([]byte, bool) {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := bytes.Clone(prefix[:i+1])
			end[i]++
			return end, true
		}
	}
	return nil, false
}
