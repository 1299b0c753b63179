package groupqueue

import (
	"slices"
	"sync"
	"testing"
)

// TestBatches holds the committer in its first batch while more items
// arrive: they must come next, together, in order, at most maxSize at a
// time, and every item exactly once.
func TestBatches(t *testing.T) {
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		batches [][]int
		done    sync.WaitGroup
	)
	q := New(3, func(batch []int) {
		if batch[0] == 0 {
			<-release
		}
		mu.Lock()
		batches = append(batches, slices.Clone(batch))
		mu.Unlock()
		for range batch {
			done.Done()
		}
	})
	done.Add(8)
	q.Add(0)
	for i := 1; i < 8; i++ {
		q.Add(i)
	}
	close(release)
	done.Wait()
	q.Close()

	var all []int
	for _, b := range batches {
		if len(b) > 3 {
			t.Errorf("batch %v is larger than maxSize 3", b)
		}
		all = append(all, b...)
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(all, want) {
		t.Errorf("items committed %v, want %v once each, in order", all, want)
	}
	if len(batches) > 4 { // [0] or [0 1 2], then the rest three at a time
		t.Errorf("%d batches %v: items queued during a commit were not taken together", len(batches), batches)
	}
}
