package cli

import (
	"io"
	"sync"
	"time"
)

// lineBuffer is the request log's writer. Written straight to the log, a
// request's line cost a write system call of its own: one more than the
// request's answer, on a path that makes few others. Lines collect here
// and are written together at most flushDelay after the first of them, or
// at once when flushSize bytes are waiting; Close writes what is left.
//
// A process killed outright (SIGKILL, a crash) loses at most the last
// flushDelay of request lines. Those are operational lines: the audit
// log, which records who read and wrote what, is in the store and written
// with what it records. Lines other than request lines (errors, warnings)
// do not go through a lineBuffer.
//
// A slog handler writes each record with one Write, so lines are never
// split. A failed write drops what it held, as an unbuffered log would
// have dropped each line.
type lineBuffer struct {
	w          io.Writer
	flushDelay time.Duration
	flushSize  int

	mu     sync.Mutex // orders Writes and flushes, so lines keep their order
	buf    []byte
	timer  *time.Timer // armed while buf holds lines
	closed bool
}

// Request log buffering: a line is written within requestLogDelay, and
// a busy server writes in blocks of about requestLogBlock bytes.
const (
	requestLogDelay = 100 * time.Millisecond
	requestLogBlock = 32 << 10
)

func newLineBuffer(w io.Writer, flushDelay time.Duration, flushSize int) *lineBuffer {
	return &lineBuffer{w: w, flushDelay: flushDelay, flushSize: flushSize}
}

// Write keeps p to be written later, or writes it and what is waiting now
// when the buffer is full or closed.
func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	switch {
	case len(b.buf) >= b.flushSize:
		b.flushLocked()
	case b.timer == nil:
		b.timer = time.AfterFunc(b.flushDelay, b.flush)
	}
	return len(p), nil
}

// flush writes what is waiting (the timer's function).
func (b *lineBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *lineBuffer) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.buf) == 0 {
		return
	}
	b.w.Write(b.buf) // a log has nowhere to report its own failure
	if cap(b.buf) > 4*b.flushSize {
		b.buf = nil // one burst of long lines does not stay allocated
	} else {
		b.buf = b.buf[:0]
	}
}

// Close writes what is waiting; later Writes go straight to the writer.
// It always returns nil.
func (b *lineBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	b.closed = true
	return nil
}
