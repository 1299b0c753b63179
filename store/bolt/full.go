package bolt

import (
	"errors"
	"fmt"
	"math"
	"syscall"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokenvault/tokenvault/store"
)

// full wraps store.ErrFull around err when it says the file cannot take
// more: the file system's "no space left on the device" or "over quota"
// (from a write of pages, an fdatasync, the append log), "file too large"
// (a write past the process's file size limit), or bbolt's "database
// reached maximum size" (Options.MaxSize, which Open also sets to the file
// size limit so that bbolt refuses the growth itself: its own error for a
// failed ftruncate does not keep the cause). The Vault then answers
// "storage is full" rather than an internal error. bbolt leaves its file
// as it was before the failed commit, so the next commit after space is
// freed succeeds.
func full(err error) error {
	if err == nil || errors.Is(err, store.ErrFull) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG) || errors.Is(err, berrors.ErrMaxSizeReached) {
		return fmt.Errorf("%w: %w", store.ErrFull, err)
	}
	return err
}

// maxSize is the size limit Open gives bbolt: the least of limit (when
// positive) and the process's file size limit (when it has one); 0 for
// none.
func maxSize(limit int) int {
	if f := fileSizeLimit(); f > 0 && f < math.MaxInt && (limit <= 0 || int(f) < limit) {
		return int(f)
	}
	return max(limit, 0)
}
