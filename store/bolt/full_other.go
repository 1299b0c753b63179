//go:build !unix

package bolt

// fileSizeLimit is 0: no file size limit is known on this system.
func fileSizeLimit() uint64 { return 0 }
