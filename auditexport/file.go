package auditexport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"

	"github.com/tokenvault/tokenvault"
)

// File defaults.
const (
	// DefaultFileMaxBytes is the size past which a File rotates: 100 MiB.
	DefaultFileMaxBytes = 100 << 20
	// DefaultFileKeep is how many rotated files a File keeps.
	DefaultFileKeep = 10
)

// FileOptions configure a File. Zero values mean the defaults.
type FileOptions struct {
	// Name is the sink's name (tokenvault.AuditSink). Empty: "file".
	Name string
	// MaxBytes is the size a file may reach: an event that would take it
	// past is written to a new file, after PATH is renamed PATH.1 (PATH.1
	// PATH.2, and so on). Zero: DefaultFileMaxBytes. A single event larger
	// than MaxBytes is written alone to a file.
	MaxBytes int64
	// Keep is how many rotated files are kept (PATH.1 to PATH.<Keep>); the
	// oldest goes. Zero: DefaultFileKeep. Negative: none is kept.
	Keep int
}

// File writes events as JSON lines (one tokenvault.AuditEvent a line) to a
// file, rotating it by size. Each delivery is synced to disk before it is
// acknowledged. The file is created 0600.
type File struct {
	path     string
	name     string
	maxBytes int64
	keep     int

	mu   sync.Mutex
	f    *os.File
	size int64
}

var _ tokenvault.AuditSink = (*File)(nil)

// NewFile opens (appending) or creates the file at path.
func NewFile(path string, opts FileOptions) (*File, error) {
	s := &File{path: path, name: opts.Name, maxBytes: opts.MaxBytes, keep: opts.Keep}
	if s.name == "" {
		s.name = "file"
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultFileMaxBytes
	}
	switch {
	case s.keep == 0:
		s.keep = DefaultFileKeep
	case s.keep < 0:
		s.keep = 0
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// open opens PATH for appending. A last line cut short (by a crash of the
// machine in the middle of a write, whose delivery was then not
// acknowledged and comes again) is ended with a newline, so that the next
// event starts a line of its own.
func (s *File) open() error {
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("auditexport: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("auditexport: %w", err)
	}
	s.f, s.size = f, fi.Size()
	if s.size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, s.size-1); err != nil {
			f.Close()
			s.f = nil
			return fmt.Errorf("auditexport: %w", err)
		}
		if last[0] != '\n' {
			if err := s.write([]byte("\n")); err != nil {
				f.Close()
				s.f = nil
				return err
			}
		}
	}
	return nil
}

// Name returns the sink's name.
func (s *File) Name() string { return s.name }

// Deliver appends the events, rotating as needed, and syncs.
func (s *File) Deliver(ctx context.Context, events []tokenvault.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("auditexport: encode event: %w", err)
		}
		line = append(line, '\n')
		if s.size+int64(buf.Len()+len(line)) > s.maxBytes && s.size+int64(buf.Len()) > 0 {
			if err := s.write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
			if err := s.rotate(); err != nil {
				return err
			}
		}
		buf.Write(line)
	}
	return s.write(buf.Bytes())
}

// write appends b and syncs.
func (s *File) write(b []byte) error {
	if len(b) > 0 {
		n, err := s.f.Write(b)
		s.size += int64(n)
		if err != nil {
			return fmt.Errorf("auditexport: write %s: %w", s.path, err)
		}
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("auditexport: sync %s: %w", s.path, err)
	}
	return nil
}

// rotate renames PATH to PATH.1 (after shifting the older ones up and
// dropping the one past Keep) and opens a new PATH.
func (s *File) rotate() error {
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("auditexport: %w", err)
	}
	s.f = nil
	if s.keep == 0 {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("auditexport: %w", err)
		}
		return s.open()
	}
	old := func(i int) string { return s.path + "." + strconv.Itoa(i) }
	if err := os.Remove(old(s.keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("auditexport: %w", err)
	}
	for i := s.keep - 1; i >= 1; i-- {
		if err := os.Rename(old(i), old(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("auditexport: %w", err)
		}
	}
	if err := os.Rename(s.path, old(1)); err != nil {
		return fmt.Errorf("auditexport: %w", err)
	}
	return s.open()
}

// Close closes the file. A later Deliver opens it again.
func (s *File) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
