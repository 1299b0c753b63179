// Package groupqueue is the queue beneath the stores' group commits
// (store/bolt and store/postgres): callers add work, and one goroutine
// takes everything queued, up to a bound, as soon as it has finished with
// the previous batch. Nobody waits for a timer: under load the queue fills
// while a batch is being committed, and the next batch takes it all.
package groupqueue

import (
	"runtime"
	"sync"
)

// Queue hands the items added to it to one goroutine, in batches.
type Queue[T any] struct {
	maxSize int
	commit  func(batch []T)

	mu      sync.Mutex
	pending []T
	wake    chan struct{} // capacity 1: a pending wake-up
	stop    chan struct{}
	stopped chan struct{}
}

// New starts the goroutine that calls commit with the items queued, at
// most maxSize at a time, in the order they were added, one batch after
// the other.
func New[T any](maxSize int, commit func(batch []T)) *Queue[T] {
	q := &Queue[T]{maxSize: max(maxSize, 1), commit: commit, wake: make(chan struct{}, 1),
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go q.loop()
	return q
}

// Add queues item for the next batch. It does not wait.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	q.pending = append(q.pending, item)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Close stops the goroutine once the batch it is committing is done. The
// caller makes sure nothing is queued or added any more: items still
// queued are never committed.
func (q *Queue[T]) Close() {
	close(q.stop)
	<-q.stopped
}

func (q *Queue[T]) loop() {
	defer close(q.stopped)
	for {
		select {
		case <-q.wake:
		case <-q.stop:
			return
		}
		for {
			// Let the goroutines runnable now go first: under load
			// they are callers about to Add, and the batch takes them
			// too, so commits (each with its syncs) are fewer and
			// larger; idle, Gosched returns at once. Measured on 2
			// CPUs at 64 connections (BENCHMARKS.md, session 10):
			// tokenize +6%, get +4%, in three of three rounds each.
			runtime.Gosched()
			batch := q.take()
			if len(batch) == 0 {
				break
			}
			q.commit(batch)
		}
	}
}

// take removes up to maxSize items from the queue.
func (q *Queue[T]) take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), q.maxSize)
	batch := make([]T, n)
	copy(batch, q.pending)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	return batch
}
