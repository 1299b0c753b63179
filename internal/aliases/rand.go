package aliases

import (
	"io"
	"sync"
)

// Rand is the source of alias draws (Options.Rand) behind a lock, since a
// Reader given in a test (a bytes.Reader) need not be safe for concurrent
// use.
type Rand struct {
	mu sync.Mutex
	r  io.Reader
}

// NewRand returns r behind a lock.
func NewRand(r io.Reader) *Rand { return &Rand{r: r} }

// Read reads from the source, one caller at a time.
func (a *Rand) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.r.Read(p)
}

// probeReader is the fixed sequence of bytes 0, 1, 2, ... that checks an
// alias expression before the transaction: the same for every check, so
// the check, and what a draw shows of the data, does not depend on luck.
type probeReader struct{ next byte }

func (p *probeReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = p.next
		p.next++
	}
	return len(b), nil
}

// readErr remembers the error of its reader, so a failing Options.Rand is
// an Internal error rather than a user's Invalid one.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}
