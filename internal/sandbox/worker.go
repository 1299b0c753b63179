package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
)

// The worker side. A worker is the host's own executable started again with
// workerEnv in its environment: this package's init sees the marker, runs
// the worker loop on standard input and output, and exits, before the
// program's main (or a test binary's TestMain) ever runs. Every program
// that imports the Vault can therefore start workers without any code of
// its own, go test binaries included, and a worker always speaks the exact
// protocol of the Vault that started it (it is the same binary).
const (
	workerEnv    = "TOKENVAULT_SANDBOX_WORKER"
	workerMarker = "tokenvault-sandbox-worker-v1"
)

// maxVaultFrame bounds the frames a worker reads: code, request and
// replies are bounded by the Vault, so this only stops a broken stream.
const maxVaultFrame = 256 << 20

func init() {
	if os.Getenv(workerEnv) != workerMarker {
		return
	}
	os.Exit(serveWorker())
}

// worker is the state of the worker loop.
type worker struct {
	in       *bufio.Reader
	outMu    sync.Mutex
	out      *bufio.Writer
	rt       *jsrt.Runtime
	programs map[string]*jsrt.Program
	console  atomic.Bool // log console output for the current run
	limits   initLimits
	fds      string // the descriptors open at start, for the fds probe
}

// serveWorker is the worker's main: it returns the exit code.
func serveWorker() int {
	os.Clearenv()
	closeInherited()
	time.Local = time.UTC // no time zone file to read, and the same dates everywhere
	runtime.GOMAXPROCS(1) // goja runs on one goroutine; one CPU at most per worker
	w := &worker{in: bufio.NewReaderSize(os.Stdin, 64<<10), programs: map[string]*jsrt.Program{}}
	out, err := reserveStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		return 2
	}
	w.out = bufio.NewWriterSize(out, 64<<10)
	w.fds = openDescriptors()

	typ, body, err := readFrame(w.in, maxVaultFrame)
	if err != nil || typ != frameInit || json.Unmarshal(body, &w.limits) != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker: no limits received")
		return 2
	}
	seccomp, err := applyLimits(w.limits)
	if err != nil {
		w.send(frameReady, readyMessage{Error: err.Error()})
		return 2
	}
	w.rt = jsrt.New(jsrt.Options{
		Timeout:      time.Duration(w.limits.CompileTimeoutMS) * time.Millisecond,
		MaxCodeBytes: w.limits.MaxCodeBytes,
		Logger:       slog.New(&consoleHandler{w: w}),
	})
	if err := w.send(frameReady, readyMessage{Seccomp: seccomp}); err != nil {
		return 2
	}
	for {
		typ, body, err := readFrame(w.in, maxVaultFrame)
		if err == io.EOF {
			return 0 // the Vault closed the pipe: retire quietly
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox worker: reading a request:", err)
			return 2
		}
		var exit bool
		switch typ {
		case frameCompile:
			err = w.compile(body)
		case frameRun:
			exit, err = w.run(body)
		case frameProbe:
			err = w.probe(body)
		default:
			err = fmt.Errorf("unexpected frame %q", typ)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox worker:", err)
			return 2
		}
		if exit {
			return 0
		}
	}
}

func (w *worker) send(typ byte, v any) error {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	return writeFrame(w.out, typ, v)
}

// sendValue is send for a frame that carries a value (writeValueFrame).
func (w *worker) sendValue(typ byte, v any, value []byte) error {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	return writeValueFrame(w.out, typ, v, value)
}

func (w *worker) compile(body []byte) error {
	var req compileRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	var out compiled
	if _, err := w.rt.Compile(req.Code); err != nil {
		out.Error = compileError(err)
	}
	return w.send(frameCompiled, out)
}

// compileError is err as a CompileError: Compile returns nothing else, but
// the worker answers something the Vault can show either way.
func compileError(err error) *jsrt.CompileError {
	if ce, ok := err.(*jsrt.CompileError); ok {
		return ce
	}
	return &jsrt.CompileError{Message: "the code could not be checked"}
}

// run runs one invocation. exit is true when the worker should end after
// answering: a run that was stopped for time may have left the code's
// goroutine inside a built-in call, and a fresh worker costs little.
func (w *worker) run(body []byte) (exit bool, err error) {
	var req runRequest
	if req.Req, err = splitValue(body, &req); err != nil {
		return false, err
	}
	if req.Forget {
		clear(w.programs)
	}
	res := runResult{}
	out, runErr := w.invoke(&req)
	if runErr == nil {
		if res.Value, err = json.Marshal(out); err != nil {
			runErr = &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the result cannot be encoded as JSON"}
		}
	}
	if runErr != nil {
		res.Value = nil
		res.Error = asJSError(runErr)
		exit = res.Error.Kind == jsrt.Timeout
	}
	if w.tooLarge(&res) {
		res = runResult{TooLarge: true}
	}
	res.CPUSeconds = cpuSeconds()
	res.HeapBytes = heapBytes()
	return exit, w.sendValue(frameResult, res, res.Value)
}

// tooLarge reports whether res is over the Vault's bound on results: the
// value, or the error (a CustomHttpResponseError's body, say), as JSON.
func (w *worker) tooLarge(res *runResult) bool {
	if int64(len(res.Value)) > w.limits.MaxResultBytes {
		return true
	}
	if res.Error == nil {
		return false
	}
	b, err := json.Marshal(res.Error)
	return err != nil || int64(len(b)) > w.limits.MaxResultBytes
}

// heapBytes is the memory the Go runtime has mapped and not given back to
// the system: what an idle worker keeps.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

func (w *worker) invoke(req *runRequest) (any, error) {
	p := w.programs[req.Hash]
	if p == nil {
		if req.Code == "" {
			return nil, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the worker does not hold this code"}
		}
		var err error
		if p, err = w.rt.Compile(req.Code); err != nil {
			return nil, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the code does not compile: " + err.Error()}
		}
		w.programs[req.Hash] = p
	}
	var args map[string]any
	if len(req.Req) > 0 {
		if err := json.Unmarshal(req.Req, &args); err != nil {
			return nil, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the request cannot be given to the code"}
		}
	}
	host := jsrt.Host{}
	if req.Client {
		host.Client = pipeClient{w}
	}
	if req.Fetch {
		host.Fetch = pipeClient{w}
	}
	w.console.Store(req.Console)
	ctx := jsrt.WithTimeout(context.Background(), time.Duration(req.TimeoutMS)*time.Millisecond)
	return w.rt.Run(ctx, p, args, host)
}

func asJSError(err error) *jsrt.Error {
	if je, ok := err.(*jsrt.Error); ok {
		return je
	}
	return &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the JavaScript runtime failed"}
}

// call sends a host call and waits for its reply. Only the code's goroutine
// calls it, one call at a time, while the worker loop waits for Run.
func (w *worker) call(method string, arg any) (json.RawMessage, error) {
	call := hostCall{Method: method, Arg: mustJSON(arg)}
	if int64(len(call.Arg))+frameSlack > w.limits.MaxFrameBytes {
		// The Vault would stop a worker that sent it.
		return nil, hostError(fmt.Sprintf("%s: the argument is larger than %s", method, FormatBytes(w.limits.MaxFrameBytes-frameSlack)))
	}
	if err := w.sendValue(frameCall, call, call.Arg); err != nil {
		return nil, fmt.Errorf("the host cannot be reached")
	}
	typ, body, err := readFrame(w.in, maxVaultFrame)
	var rep callReply
	if err == nil && typ == frameReply {
		rep.Value, err = splitValue(body, &rep)
	}
	if err != nil || typ != frameReply {
		// The stream is lost: nothing more can be exchanged.
		fmt.Fprintln(os.Stderr, "sandbox worker: no reply to a host call")
		os.Exit(2)
	}
	if rep.Error != "" {
		return nil, hostError(rep.Error)
	}
	return rep.Value, nil
}

// hostError is an error the Vault wrote for the code; its text is safe.
type hostError string

func (e hostError) Error() string { return string(e) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// pipeClient is req.client and fetch inside the worker: each method is a
// host call carried out by the Vault with the reactor's application.
type pipeClient struct{ w *worker }

func (c pipeClient) value(method string, arg any) (any, error) {
	raw, err := c.w.call(method, arg)
	if err != nil {
		return nil, err
	}
	var out any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, hostError("the host answered something the code cannot use")
		}
	}
	return out, nil
}

func (c pipeClient) Tokenize(_ context.Context, body any) (any, error) {
	return c.value("tokenize", body)
}

func (c pipeClient) Detokenize(_ context.Context, body any) (any, error) {
	return c.value("detokenize", body)
}

func (c pipeClient) GetToken(_ context.Context, id string) (any, error) {
	return c.value("getToken", id)
}

func (c pipeClient) DeleteToken(_ context.Context, id string) error {
	_, err := c.value("deleteToken", id)
	return err
}

func (c pipeClient) GetTokenIntent(_ context.Context, id string) (any, error) {
	return c.value("getTokenIntent", id)
}

func (c pipeClient) DeleteTokenIntent(_ context.Context, id string) error {
	_, err := c.value("deleteTokenIntent", id)
	return err
}

func (c pipeClient) Fetch(_ context.Context, req *jsrt.FetchRequest) (*jsrt.FetchResponse, error) {
	raw, err := c.w.call("fetch", req)
	if err != nil {
		return nil, err
	}
	var res jsrt.FetchResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, hostError("the host answered something the code cannot use")
	}
	return &res, nil
}

// consoleHandler sends console output (and the runtime's own failures) to
// the Vault, which logs it with the invocation's tenant and ids.
type consoleHandler struct{ w *worker }

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l > slog.LevelDebug || h.w.console.Load()
}

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	line := consoleLine{Level: int(r.Level), Line: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "source" {
			line.Source = a.Value.String()
		}
		return true
	})
	return h.w.send(frameConsole, line)
}

func (h *consoleHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *consoleHandler) WithGroup(string) slog.Handler      { return h }

// setMemoryTarget makes the collector work harder as the worker nears its
// memory limit, so that garbage does not run a worker out of memory.
// The goroutine stack is bounded well below the memory limit, so that
// runaway native recursion (goja recursing in Go) is a stack overflow, not
// an exhausted memory limit.
func setMemoryTarget(limit int64) {
	debug.SetMemoryLimit(limit * 3 / 4)
	debug.SetMaxStack(int(min(limit/8, 64<<20)))
}
