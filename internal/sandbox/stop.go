package sandbox

import (
	"errors"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
)

// stopCause is why the Vault lost a worker in the middle of its work.
type stopCause int32

const (
	stopNone     stopCause = iota
	stopTime               // the deadline passed: killed by the Vault
	stopCanceled           // the caller's context was canceled: killed by the Vault
	stopCPU                // the kernel ended it for RLIMIT_CPU
	stopMemory             // the Go runtime ran out of memory under RLIMIT_DATA
	stopStack              // the Go runtime's stack limit (native recursion)
	stopCrashed            // any other death
	stopProtocol           // it sent something it should not have: killed by the Vault
	stopStart              // it did not start
	stopRetired            // it was being retired
)

// Reason classifies a StopError.
type Reason int

const (
	// StoppedTime: the code did not finish in time (wall clock or CPU), or
	// the invocation was canceled.
	StoppedTime Reason = iota + 1
	// StoppedMemory: the code's worker ran out of the memory it may use.
	StoppedMemory
	// Crashed: the worker died for another reason (a native stack
	// overflow, a fatal runtime error, a signal) or broke the protocol.
	Crashed
)

func (r Reason) String() string {
	switch r {
	case StoppedTime:
		return "stopped for time"
	case StoppedMemory:
		return "stopped for memory"
	case Crashed:
		return "crashed"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// StopError is the failure of an invocation whose worker process was
// stopped or died. Only that invocation fails; the worker is replaced.
// Message never carries a host detail or anything of the code's data.
type StopError struct {
	Reason  Reason
	Message string
}

func (e *StopError) Error() string { return "sandbox: " + e.Reason.String() + ": " + e.Message }

// stopError explains cause to the caller.
func (s *Sandbox) stopError(cause stopCause, budget time.Duration) *StopError {
	switch cause {
	case stopTime:
		return &StopError{Reason: StoppedTime, Message: fmt.Sprintf("the code did not finish within %s", jsrt.RoundBudget(budget))}
	case stopCanceled:
		return &StopError{Reason: StoppedTime, Message: "the invocation was canceled"}
	case stopCPU:
		return &StopError{Reason: StoppedTime, Message: "the code used more CPU time than it may"}
	case stopMemory:
		return &StopError{Reason: StoppedMemory, Message: fmt.Sprintf("the code used more than %s of memory", FormatBytes(s.opts.MemoryBytes))}
	case stopStack:
		return &StopError{Reason: Crashed, Message: "the code recursed too deeply (Maximum call stack size exceeded)"}
	case stopProtocol:
		return &StopError{Reason: Crashed, Message: "the code's worker process misbehaved and was stopped"}
	}
	return &StopError{Reason: Crashed, Message: "the code's worker process crashed"}
}

// FormatBytes writes n as people write a limit: "4 MiB", "256 KiB", or
// bytes when it is not a whole number of either.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReasonOf reports why err stopped an invocation: the Reason of a
// *StopError, StoppedTime for a *jsrt.Error of kind Timeout (the worker
// interrupted the code at its deadline itself), StoppedMemory for one of
// kind MemoryLimit, and 0 for anything else.
func ReasonOf(err error) Reason {
	var se *StopError
	if errors.As(err, &se) {
		return se.Reason
	}
	var je *jsrt.Error
	if errors.As(err, &je) {
		switch je.Kind {
		case jsrt.Timeout:
			return StoppedTime
		case jsrt.MemoryLimit:
			return StoppedMemory
		}
	}
	return 0
}
