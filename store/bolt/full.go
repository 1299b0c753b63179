package bolt

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/tokenvault/tokenvault/store"
)

// full wraps store.ErrFull around err when it is the file system's "no
// space left on the device" or "over quota" (from a write of pages, an
// fdatasync, the append log), so that the Vault answers "storage is full"
// rather than an internal error. bbolt leaves its file as it was before
// the failed commit, so the next commit after space is freed succeeds.
func full(err error) error {
	if err == nil || errors.Is(err, store.ErrFull) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", store.ErrFull, err)
	}
	return err
}
