package bolt

import (
	"context"
	"errors"

	"github.com/tokenvault/tokenvault/store/internal/groupqueue"

	"go.etcd.io/bbolt"
)

// Group commit. bbolt allows one writer at a time and every commit costs an
// fsync, so concurrent Updates share transactions: each one queues its
// function, and one committer goroutine runs everything queued in one
// transaction with one fsync, as soon as the previous commit has ended.
// Nobody waits for a timer (bbolt's DB.Batch waits MaxBatchDelay for
// company): under load the queue fills while a commit is in flight, and the
// next commit takes it all; alone, an Update does not queue at all (see
// Update).
//
// A function that fails rolls back the transaction it ran in. The failing
// call is then run again on its own, so that it gets its own result (its
// error, or its panic, which the caller re-raises), and the others run
// again together without it: one bad function fails only its own caller.
// Functions may thus run more than once, as store.Store allows.
//
// What the functions add to the writes done once per transaction
// (store.PreCommit) is gathered as each succeeds and written after the
// last, before the commit (Store.preCommit); every attempt starts with
// none (Store.preStart), so a batch run again adds it afresh. If that
// write fails, every call runs alone, each with its own.

// groupCall is one queued Update.
type groupCall struct {
	ctx context.Context
	run func(*bbolt.Tx) error
	// err, and panicked with the recovered value when run panicked, are
	// set before done is closed.
	err      error
	panicked any
	hasPanic bool
	done     chan struct{}
}

// errPanicked rolls back a transaction in which a function panicked; the
// panic goes to its caller (groupCall.panicked).
var errPanicked = errors.New("bolt: an update function panicked")

// groupCommitter owns the queue and the goroutine that commits it.
type groupCommitter struct {
	s     *Store // its writes done once per transaction (preCommit)
	db    *bbolt.DB
	path  string // names the file in a *DamagedError
	queue *groupqueue.Queue[*groupCall]
	// reserve is the zeros written ahead of the file's high-water mark
	// (reserve.go); nil without fsync.
	reserve *reserve
}

func newGroupCommitter(s *Store, db *bbolt.DB, path string, maxSize int, r *reserve) *groupCommitter {
	g := &groupCommitter{s: s, db: db, path: path, reserve: r}
	g.queue = groupqueue.New(maxSize, g.commit)
	return g
}

// update queues run and waits for the commit that carries it (or for its
// own failure). A panic in run is re-raised here, on the caller's
// goroutine, after the rollback.
func (g *groupCommitter) update(ctx context.Context, run func(*bbolt.Tx) error) error {
	c := &groupCall{ctx: ctx, run: run, done: make(chan struct{})}
	g.queue.Add(c)
	<-c.done
	if c.hasPanic {
		panic(c.panicked)
	}
	return c.err
}

// close stops the committer. The Store calls it after its gate has
// closed, when no Update can be queued or waiting.
func (g *groupCommitter) close() { g.queue.Close() }

// commit runs batch in one transaction. A call that fails is taken out and
// run alone, and the rest are run again together, until a transaction of
// the rest commits (or fails to commit: then they all get that error).
func (g *groupCommitter) commit(batch []*groupCall) {
	for len(batch) > 0 {
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
		failed, preFailed := -1, false
		// runOnce catches the panics of the Updates' functions: what
		// guard catches is bbolt's (damage.go).
		err := guard(g.path, nil, func() error {
			return g.db.Update(func(btx *bbolt.Tx) error {
				g.reserve.committed(btx)
				g.s.preStart()
				for i, c := range batch {
					if err := c.runOnce(btx); err != nil {
						failed = i
						return err
					}
				}
				if err := g.s.preCommit(btx); err != nil {
					preFailed = true
					return err
				}
				return nil
			})
		})
		if preFailed {
			// The write done once for the batch failed: each call runs
			// alone, with its own, and gets its own result.
			for _, c := range batch {
				c.runAlone(g.db, g.path, g.s)
			}
			return
		}
		if failed < 0 {
			for _, c := range batch {
				c.finish(err)
			}
			// Between commits, after answering: the next batch waits.
			if g.reserve.low() {
				g.reserve.grow(g.db)
			}
			return
		}
		alone := batch[failed]
		alone.runAlone(g.db, g.path, g.s)
		batch = append(append(make([]*groupCall, 0, len(batch)-1), batch[:failed]...), batch[failed+1:]...)
	}
}

// runOnce runs the call's function in btx, turning a panic into
// errPanicked (the transaction rolls back; the call is then run alone).
func (c *groupCall) runOnce(btx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errPanicked
		}
	}()
	return c.run(btx)
}

// runAlone runs the call in a transaction of its own and answers it: its
// error, or the panic its function raised (kept for the caller).
func (c *groupCall) runAlone(db *bbolt.DB, path string, s *Store) {
	var p any
	panicked := false
	err := guard(path, nil, func() error {
		return db.Update(func(btx *bbolt.Tx) (err error) {
			defer func() {
				if r := recover(); r != nil {
					p, panicked = r, true
					err = errPanicked
				}
			}()
			s.preStart()
			if err := c.run(btx); err != nil {
				return err
			}
			return s.preCommit(btx)
		})
	})
	if panicked {
		c.panicked, c.hasPanic = p, true
	}
	c.finish(err)
}

func (c *groupCall) finish(err error) {
	c.err = err
	close(c.done)
}
