//go:build unix

package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// fillUntilRefused writes 16 KiB values, one Update each, until an Update
// fails, and returns its error and how many committed. Every committed
// key must read back afterwards, and the refused one must be absent.
func fillUntilRefused(t *testing.T, s *Store) error {
	t.Helper()
	ctx := context.Background()
	value := make([]byte, 16<<10)
	var refused error
	n := 0
	for ; n < 100000 && refused == nil; n++ {
		refused = s.Update(ctx, func(tx store.Tx) error {
			return tx.Put(fmt.Appendf(nil, "k/%06d", n), value)
		})
	}
	if refused == nil {
		t.Fatal("the file took 1.6 GB without a refusal")
	}
	err := s.View(ctx, func(tx store.Tx) error {
		for i := range n - 1 {
			if v, err := tx.Get(fmt.Appendf(nil, "k/%06d", i)); err != nil || len(v) != len(value) {
				return fmt.Errorf("k/%06d, committed before the refusal: %d bytes, %v", i, len(v), err)
			}
		}
		if v, err := tx.Get(fmt.Appendf(nil, "k/%06d", n-1)); err != nil || v != nil {
			return fmt.Errorf("the refused k/%06d: %d bytes, %v", n-1, len(v), err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	t.Logf("%d commits, then %v", n-1, refused)
	return refused
}

// TestMaxSizeIsFull: a commit that would grow the file past
// Options.MaxSize fails with store.ErrFull, leaving every earlier commit
// and nothing of its own, and the file within the limit.
func TestMaxSizeIsFull(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, &Options{MaxSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := fillUntilRefused(t, s); !errors.Is(err, store.ErrFull) {
		t.Errorf("Update past MaxSize = %v, want store.ErrFull", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() > 4<<20 {
		t.Errorf("the file is %d bytes (%v), over its MaxSize of 4 MiB", fi.Size(), err)
	}
}

// TestFileSizeLimitIsFull: in a process whose file size limit
// (RLIMIT_FSIZE, ulimit -f) the file reaches, a commit that would grow it
// past the limit fails with store.ErrFull, not with bbolt's "file resize
// error", every earlier commit kept. The limit is set in a child process
// (this test binary again), since it binds every file the process writes.
func TestFileSizeLimitIsFull(t *testing.T) {
	if dir := os.Getenv("TOKENVAULT_FSIZE_CHILD"); dir != "" {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 4 << 20, Max: 4 << 20}); err != nil {
			t.Fatal(err)
		}
		s, err := Open(filepath.Join(dir, "test.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := fillUntilRefused(t, s); !errors.Is(err, store.ErrFull) {
			t.Errorf("Update past the file size limit = %v, want store.ErrFull", err)
		}
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimitIsFull$", "-test.v")
	cmd.Env = append(os.Environ(), "TOKENVAULT_FSIZE_CHILD="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Errorf("the child with a 4 MiB file size limit: %v\n%s", err, out)
	}
}
