package bolt

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// TestFullWrapsNoSpace: the errors a full file system gives bbolt's writes
// and syncs (a *PathError or a bare Errno) are store.ErrFull, keeping the
// cause; other errors are left alone.
func TestFullWrapsNoSpace(t *testing.T) {
	for _, err := range []error{
		syscall.ENOSPC,
		syscall.EDQUOT,
		&fs.PathError{Op: "write", Path: "vault.db", Err: syscall.ENOSPC},
	} {
		got := full(err)
		if !errors.Is(got, store.ErrFull) || !errors.Is(got, err) {
			t.Errorf("full(%v) = %v, want store.ErrFull wrapping it", err, got)
		}
		if again := full(got); again != got {
			t.Errorf("full(full(%v)) = %v, want it unchanged", err, again)
		}
	}
	for _, err := range []error{nil, syscall.EIO, errors.New("other")} {
		if got := full(err); got != err {
			t.Errorf("full(%v) = %v, want it unchanged", err, got)
		}
	}
}
