package listing

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// listWalk walks one list index, or several merged (the list of every
// token walks the three types' indexes), in position order from a
// cursor. Each index is read in chunks as the walk reaches it: one index
// in chunks of what the page still needs, several in chunks that start
// small and double, so that an index the page takes little from costs
// little.
type listWalk struct {
	t      *unit.Tx
	walked []*walkedIndex
}

// walkedIndex is one index of a walk: the positions read from it and not
// yet taken, where its next read starts, and whether it has more.
type walkedIndex struct {
	prefix barrier.Prefix
	buf    []string
	after  string
	done   bool
	chunk  int
}

// newListWalk walks the indexes idxs merged, from the position after.
func newListWalk(t *unit.Tx, idxs []barrier.Prefix, after string) *listWalk {
	w := &listWalk{t: t}
	for _, p := range idxs {
		w.walked = append(w.walked, &walkedIndex{prefix: p, after: after, chunk: 4})
	}
	return w
}

// fill reads the next chunk of x, at most limit positions.
func (w *listWalk) fill(x *walkedIndex, limit int) error {
	n := limit
	if len(w.walked) > 1 {
		n = min(x.chunk, limit)
		x.chunk *= 2
	}
	n = max(n, 1)
	got := 0
	err := w.t.Scan(x.prefix, x.after, n, func(_ barrier.Key, pos string) error {
		x.buf = append(x.buf, pos)
		got++
		return nil
	})
	if err != nil {
		return err
	}
	if got > 0 {
		x.after = x.buf[len(x.buf)-1]
	}
	x.done = got < n
	return nil
}

// next is the next position of the walk; false at its end. want bounds
// how many positions the caller may still take (a chunk is no larger
// than want+1).
func (w *listWalk) next(want int) (string, bool, error) {
	var head *walkedIndex
	for _, x := range w.walked {
		if len(x.buf) == 0 && !x.done {
			if err := w.fill(x, want+1); err != nil {
				return "", false, err
			}
		}
		if len(x.buf) > 0 && (head == nil || x.buf[0] < head.buf[0]) {
			head = x
		}
	}
	if head == nil {
		return "", false, nil
	}
	pos := head.buf[0]
	head.buf = head.buf[1:]
	return pos, true, nil
}

// more reports whether the walk has positions left, reading at most one
// more position of each index to know.
func (w *listWalk) more() (bool, error) {
	for _, x := range w.walked {
		if len(x.buf) == 0 && !x.done {
			if err := w.fill(x, 1); err != nil {
				return false, err
			}
		}
		if len(x.buf) > 0 {
			return true, nil
		}
	}
	return false, nil
}
