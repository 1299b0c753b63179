package sandbox

import "fmt"

// TooLargeError fails a run whose result (what the code returned, or the
// body of the error it threw) is over Options.MaxResultBytes as JSON.
// The code ran; only its result was refused. The worker that ran it is
// retired, so that it does not keep the memory the result took.
type TooLargeError struct {
	Limit int64 // Options.MaxResultBytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("sandbox: the code's result is larger than %s", FormatBytes(e.Limit))
}
