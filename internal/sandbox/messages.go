package sandbox

import "github.com/tokenvault/tokenvault/internal/jsrt"

// initLimits is the first frame a worker reads: the limits it applies to
// itself before it reads any code.
type initLimits struct {
	MemoryBytes  int64 `json:"memory_bytes"`   // RLIMIT_DATA above what the worker had mapped at start
	CPUSeconds   int64 `json:"cpu_seconds"`    // RLIMIT_CPU for the worker's whole life
	MaxCodeBytes int   `json:"max_code_bytes"` // largest code Compile accepts
	// CompileTimeoutMS bounds running a module's body when code is checked.
	CompileTimeoutMS int64 `json:"compile_timeout_ms"`
	// MaxResultBytes bounds what a run returns, as JSON (Options); a
	// larger result is answered with runResult.TooLarge instead.
	MaxResultBytes int64 `json:"max_result_bytes"`
	// MaxFrameBytes is the largest frame the Vault reads from the worker:
	// a host call whose argument would not fit fails in the worker.
	MaxFrameBytes int64 `json:"max_frame_bytes"`
}

// readyMessage answers initLimits. Error is set when a limit could not be
// applied: the worker then exits, and the Vault refuses to run code.
type readyMessage struct {
	Error   string `json:"error,omitempty"`
	Seccomp bool   `json:"seccomp"` // a seccomp filter is in force
}

type compileRequest struct {
	Code string `json:"code"`
}

// compiled answers compileRequest: Error is nil when the code compiled.
type compiled struct {
	Error *jsrt.CompileError `json:"error,omitempty"`
}

// runRequest runs code. Code is left out when the worker has compiled the
// code of Hash since the last Forget; Forget asks the worker to drop every
// compiled program first (the Vault tracks what a worker holds).
type runRequest struct {
	Hash      string `json:"hash"`
	Code      string `json:"code,omitempty"`
	Forget    bool   `json:"forget,omitempty"`
	Req       []byte `json:"-"` // the frame's value: the code's req as JSON
	TimeoutMS int64  `json:"timeout_ms"`
	Client    bool   `json:"client"`  // req.client is available
	Fetch     bool   `json:"fetch"`   // fetch is available
	Console   bool   `json:"console"` // the Vault logs console output
}

// consoleLine is one line of console output, or a failure of the runtime
// itself (Level above debug).
type consoleLine struct {
	Level  int    `json:"level"`
	Source string `json:"source"`
	Line   string `json:"line"`
}

// hostCall asks the Vault to carry out a client method or a fetch.
type hostCall struct {
	Method string `json:"method"` // tokenize, detokenize, getToken, deleteToken, fetch
	Arg    []byte `json:"-"`      // the frame's value: the argument as JSON
}

// callReply answers a hostCall: Value, or Error (a message safe to give
// the code).
type callReply struct {
	Value []byte `json:"-"` // the frame's value: the answer as JSON
	Error string `json:"error,omitempty"`
}

// runResult ends a run. CPUSeconds is the CPU time the worker has used in
// all, so the Vault can retire it before its RLIMIT_CPU is near.
// TooLarge is set, with neither Value nor Error, when what the code
// returned or threw is over initLimits.MaxResultBytes as JSON. HeapBytes is
// the memory the worker's Go runtime holds from the system after the run,
// so the Vault can retire a worker that grew (pool.put).
type runResult struct {
	Value      []byte      `json:"-"` // the frame's value: the result as JSON
	Error      *jsrt.Error `json:"error,omitempty"`
	TooLarge   bool        `json:"too_large,omitempty"`
	CPUSeconds float64     `json:"cpu_seconds"`
	HeapBytes  int64       `json:"heap_bytes"`
}

// probeRequest (tests only) asks the worker to try one thing its limits
// forbid; probeResult says what happened.
type probeRequest struct {
	What string `json:"what"` // open, socket, exec, env, fds, memory
}

type probeResult struct {
	Error  string `json:"error,omitempty"` // the failure, as the OS reported it
	Detail string `json:"detail,omitempty"`
}
