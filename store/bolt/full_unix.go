//go:build unix

package bolt

import "syscall"

// fileSizeLimit is the process's soft RLIMIT_FSIZE, or 0 when there is
// none. Writing past it fails with EFBIG (Go ignores the SIGXFSZ that
// comes with it).
func fileSizeLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &l); err != nil || uint64(l.Cur) >= 1<<62 {
		return 0 // RLIM_INFINITY, whichever way the system spells it
	}
	return uint64(l.Cur)
}
