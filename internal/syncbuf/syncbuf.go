// Package syncbuf is an output buffer that several goroutines may write
// at once, for tests that collect a server's log and read it meanwhile.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer whose String may be called while others write.
// The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
