//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// Workers need Linux: its rlimits and seccomp are what bound them. On other
// systems a worker refuses to start, so code runs only with
// Options.InProcess (for code the host trusts).
var errUnsupported = errors.New("sandbox workers need Linux (rlimits and seccomp)")

func applyLimits(initLimits) (bool, error) { return false, errUnsupported }

func closeInherited() {}

func openDescriptors() string { return "" }

func reserveStdout() (*os.File, error) { return os.Stdout, nil }

func cpuSeconds() float64 { return 0 }

func workerAttrs(*exec.Cmd) {}

func (w *worker) probe([]byte) error { return errUnsupported }
