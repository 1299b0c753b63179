package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/tokenvault/tokenvault/store/internal/groupqueue"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/internal/precommit"
)

// Group commit. Every PostgreSQL commit waits for its WAL to be flushed to
// disk, and a pool has few connections, so concurrent Updates share
// transactions: each one queues its function, and one committer goroutine
// runs everything queued, one function after the other, in one
// SERIALIZABLE transaction with one COMMIT, as soon as the previous one has
// ended. Nobody waits for a timer: under load the queue fills while a
// commit is in flight; alone, an Update does not queue at all (see
// Store.Update). One batch at a time: two large transactions running at
// once would mostly abort each other, since SERIALIZABLE turns the many
// row locks of a large read into a lock on the whole table.
//
// A function that fails (or panics, or whose caller's context is done)
// fails only its own caller. Its writes are buffered until a read sends
// them; one that never sent them is undone by dropping its buffer, for
// free, and the first time one sends its own writes a SAVEPOINT goes ahead
// of them in the same round trip, so that ROLLBACK TO SAVEPOINT undoes them
// (sent with the next round trip). A panicking function is then run again
// alone, on its caller's goroutine, so that its panic reaches its caller
// with its own stack. Every caller is answered only after the COMMIT:
// a function's error too, since it may come from what an earlier function
// in the transaction wrote.
//
// Failures of the shared transaction itself: a serialization failure or a
// deadlock rolls it back and runs the whole batch again after a backoff,
// taking the table lock from the fourth attempt on, as an Update alone
// does; a statement that fails in a way a savepoint cannot contain (one sent
// before any savepoint, or a write refused at COMMIT), or a function that
// ignores a failed statement, rolls it back and every caller runs its
// function alone; a COMMIT whose outcome is unknown (the connection broke)
// answers every caller with that error, as it would answer an Update alone.

// groupCall is one queued Update.
type groupCall struct {
	ctx context.Context
	fn  func(store.Tx) error
	// err, or alone (run fn again alone: it panicked, or the shared
	// transaction failed), is set before done is closed.
	err   error
	alone bool
	done  chan struct{}
}

// rollbackToSavepoint undoes the writes of a function with a savepoint.
var rollbackToSavepoint = []string{"ROLLBACK TO SAVEPOINT f", "RELEASE SAVEPOINT f"}

// errPanicked marks a function that panicked in a shared transaction.
var errPanicked = errors.New("postgres: an update function panicked")

type groupCommitter struct {
	s     *Store
	queue *groupqueue.Queue[*groupCall]
}

func newGroupCommitter(s *Store, maxSize int) *groupCommitter {
	g := &groupCommitter{s: s}
	g.queue = groupqueue.New(maxSize, g.commit)
	return g
}

// update queues fn and waits for the commit that carries it, or runs it
// alone when told to.
func (g *groupCommitter) update(ctx context.Context, fn func(store.Tx) error) error {
	c := &groupCall{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.queue.Add(c)
	<-c.done
	if c.alone {
		if err := ctx.Err(); err != nil {
			return err
		}
		return g.s.updateAlone(ctx, fn)
	}
	return c.err
}

// close stops the committer. The Store calls it after its gate has
// closed, when no Update can be queued or waiting.
func (g *groupCommitter) close() { g.queue.Close() }

// batchOutcome is how a shared transaction ended.
type batchOutcome int

const (
	committed batchOutcome = iota // every call has its result
	retry                         // serialization failure or deadlock: run them all again
	broken                        // every call runs alone
	without                       // the call whose result is set runs alone, the others again (Store.rerunFailed)
	failed                        // every call gets the error
)

// commit runs batch in shared transactions until one commits or the
// retries run out.
func (g *groupCommitter) commit(batch []*groupCall) {
	wait := backoff.Backoff{Base: minBackoff, Max: maxBackoff}
	for attempt := 0; ; attempt++ {
		// A caller that has given up is answered without running.
		live := batch[:0:0]
		for _, c := range batch {
			if err := c.ctx.Err(); err != nil {
				c.finish(err)
				continue
			}
			live = append(live, c)
		}
		batch = live
		if len(batch) == 0 {
			return
		}
		results := make([]error, len(batch))
		outcome, err := g.s.runBatch(batch, results, attempt >= lockAfter)
		switch outcome {
		case committed:
			for i, c := range batch {
				if results[i] == errPanicked {
					c.runAlone()
				} else {
					c.finish(results[i])
				}
			}
			return
		case retry:
			if attempt >= g.s.maxRetries {
				err = fmt.Errorf("postgres: update: gave up after %d attempts: %w", attempt+1, err)
				for _, c := range batch {
					c.finish(err)
				}
				return
			}
			sleep(context.Background(), wait.Next())
		case broken:
			for _, c := range batch {
				c.runAlone()
			}
			return
		case without:
			// Store.rerunFailed: batch[i] failed; it runs alone and the
			// others run again without it.
			i := len(results) - 1
			for results[i] == nil {
				i--
			}
			batch[i].runAlone()
			batch = append(batch[:i:i], batch[i+1:]...)
			attempt--
		case failed:
			for _, c := range batch {
				c.finish(err)
			}
			return
		}
	}
}

func (c *groupCall) finish(err error) {
	c.err = err
	close(c.done)
}

func (c *groupCall) runAlone() {
	c.alone = true
	close(c.done)
}

// runBatch runs the functions of batch in one transaction and commits it,
// setting results[i] to the outcome of batch[i] (errPanicked for a panic)
// when it returns committed, and the error otherwise.
func (s *Store) runBatch(batch []*groupCall, results []error, lock bool) (batchOutcome, error) {
	// The statements do not use a caller's context: one caller giving up
	// must not abort the others' transaction. Each function's caller's
	// context is checked before each of its calls and after it returns.
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return failed, s.wrap("connect", err)
	}
	t := &tx{s: s, ctx: ctx, conn: conn, writable: true, begin: s.sql.beginWrite, group: true}
	if lock {
		t.begin = s.sql.beginWriteLock
	}
	defer func() {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(ctx, rollbackTimeout)
			defer cancel()
			_, _ = conn.Exec(rctx, "ROLLBACK")
		}
		conn.Release()
	}()

	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		t.mark, t.savepoint, t.fnAdvanced, t.callCtx = len(t.pending), false, 0, c.ctx
		h := &groupTx{t: t}
		err := h.run(c.fn)
		h.done = true
		t.callCtx = nil
		if t.err != nil && isRetryable(t.err) {
			return retry, t.err
		}
		if err == nil && t.err != nil {
			// fn ignored a failed statement; run it alone to see.
			err = errPanicked
		}
		if err == nil {
			err = c.ctx.Err()
		}
		if err == nil {
			t.pre.Merge(&h.pre)
			if t.savepoint {
				t.prefix = append(t.prefix, "RELEASE SAVEPOINT f")
			}
			t.advanced += t.fnAdvanced
			t.fnAdvanced = 0
			continue
		}
		results[i] = err
		if s.rerunFailed {
			clear(results[:i])
			return without, nil
		}
		// Undo fn's writes: those still buffered, and those sent after
		// its savepoint.
		t.pending = t.pending[:t.mark]
		t.fnAdvanced = 0
		switch {
		case t.savepoint && t.err == nil:
			// Sent with the next round trip.
			t.prefix = append(t.prefix, rollbackToSavepoint...)
		case t.savepoint:
			// A failed statement aborted the transaction, which now
			// refuses everything, even the preparing of the next
			// batch's statements: roll back to the savepoint at once.
			if _, err := conn.Exec(ctx, rollbackToSavepoint[0]+"; "+rollbackToSavepoint[1]); err != nil {
				return broken, err
			}
			t.err = nil
		case t.err != nil:
			// Failed before a savepoint: the transaction is lost.
			return broken, t.err
		}
	}
	t.savepoint = false
	// The writes done once for the functions that succeeded: buffered,
	// sent with COMMIT.
	if err := t.pre.Write(&groupTx{t: t}); err != nil {
		if t.err != nil && isRetryable(t.err) {
			return retry, t.err
		}
		return broken, err
	}
	if err := t.commit(); err != nil {
		switch {
		case isRetryable(err):
			return retry, err
		case refused(err):
			return broken, err
		}
		return failed, err
	}
	return committed, nil
}

// refused reports whether err says that the server refused a statement,
// or answered COMMIT with ROLLBACK: the transaction certainly did not
// commit, and its functions may run again.
func refused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback)
}

// groupTx is the store.Tx one function of a shared transaction sees: the
// shared tx, until the function returns.
type groupTx struct {
	t    *tx
	done bool
	// pre is what the function added to the writes done once per
	// transaction (store.PreCommit): the shared tx's once it succeeds.
	pre precommit.Parts
}

// AddPreCommit adds part to w's write, done before the shared COMMIT if
// the function succeeds (runBatch).
func (h *groupTx) AddPreCommit(w store.PreCommitWrite, part any) error {
	if h.done {
		return errTxDone
	}
	if err := h.t.checkWrite(); err != nil {
		return err
	}
	h.pre.Add(w, part)
	return nil
}

// run calls fn, turning a panic into errPanicked.
func (h *groupTx) run(fn func(store.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errPanicked
		}
	}()
	return fn(h)
}

func (h *groupTx) Get(key []byte) ([]byte, error) {
	if h.done {
		return nil, errTxDone
	}
	return h.t.Get(key)
}

func (h *groupTx) Put(key, value []byte) error {
	if h.done {
		return errTxDone
	}
	return h.t.Put(key, value)
}

func (h *groupTx) Delete(key []byte) error {
	if h.done {
		return errTxDone
	}
	return h.t.Delete(key)
}

func (h *groupTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	if h.done {
		return errTxDone
	}
	return h.t.Scan(prefix, after, limit, fn)
}

func (h *groupTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	if h.done {
		return errTxDone
	}
	return h.t.ScanReverse(prefix, before, limit, fn)
}

func (h *groupTx) Generation() (uint64, bool, error) {
	if h.done {
		return 0, false, errTxDone
	}
	return h.t.Generation()
}

func (h *groupTx) AdvanceGeneration() error {
	if h.done {
		return errTxDone
	}
	return h.t.AdvanceGeneration()
}
