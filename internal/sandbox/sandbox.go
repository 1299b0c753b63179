package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
)

// Defaults for the zero values of Options.
const (
	DefaultWorkers      = 16
	DefaultMemoryBytes  = 256 << 20
	DefaultTimeout      = 10 * time.Second
	DefaultMaxCodeBytes = 256 << 10
	// DefaultMaxResultBytes bounds what one run returns, as JSON: every
	// result is held whole by the Vault, decoded, and written again, so
	// eight concurrent 30 MB results once took a server from 31 to 633 MB.
	DefaultMaxResultBytes = 4 << 20
)

// Fixed bounds.
const (
	// killGrace is how long past its deadline a worker may take to answer
	// before it is killed: the worker interrupts the code itself at the
	// deadline, and only a call goja cannot interrupt needs the kill.
	killGrace = 500 * time.Millisecond
	// maxRunSeconds is the longest run the Vault asks for (an asynchronous
	// reactor's 210 s, rounded up); workerCPUSeconds, a worker's lifetime
	// RLIMIT_CPU, leaves room for several, and a worker is retired before
	// it could reach the limit in the middle of a run.
	maxRunSeconds    = 240
	workerCPUSeconds = 4 * maxRunSeconds
	// maxKnownPrograms bounds the compiled programs a worker keeps; past
	// it the Vault tells the worker to forget them all.
	maxKnownPrograms = 256
	// maxConsoleLines bounds what one run may log (jsrt keeps 1000 lines;
	// this guards against a worker that does not).
	maxConsoleLines = 1010
	// compileCacheSize bounds the outcomes of Compile kept by code hash.
	compileCacheSize = 4096
	// frameSlack is what a frame holds beyond the value it carries (its
	// JSON envelope); minCallFrame the least room for a host call's
	// argument (fetch sends up to MaxFetchRequestBytes, 1 MiB, as base64).
	frameSlack   = 64 << 10
	minCallFrame = 2 << 20
	// A worker is retired after a run whose request or answer was over
	// retireIOBytes, or after which its Go runtime held over
	// retireHeapBytes from the system (or a quarter of its memory limit,
	// if less; a fresh worker holds about 6 MiB): an idle worker would
	// keep that memory, and a fresh one costs only a process start.
	retireIOBytes   = 1 << 20
	retireHeapBytes = 32 << 20
)

// Options configure a Sandbox. Zero values mean the documented defaults.
type Options struct {
	// Workers is the most worker processes alive at once, and so the most
	// invocations running at once. Zero: 16.
	Workers int
	// PerTenant is the most invocations (synchronous or not, and checks of
	// code) one tenant may have running at once; more wait for a slot until
	// their deadline. Zero: half of Workers (at least 1).
	//
	// It also splits the pool: a tenant's second and later invocations at
	// once run only while fewer than PerTenant workers are busy in all;
	// the other Workers − PerTenant are kept for tenants with nothing
	// running. So a tenant with nothing running gets a worker at once
	// unless Workers − PerTenant + 1 or more other tenants are running
	// code (9 with the defaults), however long their code runs; a freed
	// worker goes to the waiting tenant with the fewest invocations
	// running. PerTenant equal to Workers keeps no reserve.
	PerTenant int
	// MemoryBytes bounds the memory of one worker (RLIMIT_DATA over what
	// the Go runtime had mapped when it started). Zero: 256 MiB.
	MemoryBytes int64
	// Timeout bounds a run when the invocation gives none, and the check
	// of code by Compile. Zero: 10s.
	Timeout time.Duration
	// MaxCodeBytes is the largest code accepted. Zero: 256 KiB.
	MaxCodeBytes int
	// MaxResultBytes bounds what one run may return (or throw, as a
	// CustomHttpResponseError's body), as JSON; a larger one fails the
	// run with a *TooLargeError naming the bound. The worker cannot make
	// the Vault read more than this (and 64 KiB of framing) from it.
	// Zero: 4 MiB.
	MaxResultBytes int64
	// InProcess runs code in this process, without workers or any bound
	// on memory or CPU beyond the deadline: only for code the host trusts
	// (and for tests of the runtime itself). Tenant code must never run
	// this way.
	InProcess bool
	// Logger receives failures of workers and, with Console, the console
	// output of the code (at debug level, with the invocation's
	// attributes). Nil: discard.
	Logger *slog.Logger
	// Console passes the code's console output to Logger. Off, it is
	// dropped: tenant code holds detokenized data, and its console lines
	// would carry it into the host's logs.
	Console bool
}

// Sandbox runs tenant code in a pool of worker processes. It is safe for
// concurrent use.
type Sandbox struct {
	opts Options
	pool *pool
	rt   *jsrt.Runtime // InProcess only

	cacheMu  sync.Mutex
	compiled map[string]*jsrt.CompileError // outcomes of Compile by code hash; nil: compiles
}

// New returns a Sandbox. Workers start on first use.
func New(opts Options) *Sandbox {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.PerTenant <= 0 {
		opts.PerTenant = max(1, opts.Workers/2)
	}
	opts.PerTenant = min(opts.PerTenant, opts.Workers)
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = DefaultMemoryBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxCodeBytes <= 0 {
		opts.MaxCodeBytes = DefaultMaxCodeBytes
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sandbox{opts: opts, compiled: map[string]*jsrt.CompileError{}}
	s.pool = newPool(opts.Workers, opts.PerTenant, initLimits{
		MemoryBytes:      opts.MemoryBytes,
		CPUSeconds:       workerCPUSeconds,
		MaxCodeBytes:     opts.MaxCodeBytes,
		CompileTimeoutMS: opts.Timeout.Milliseconds(),
		MaxResultBytes:   opts.MaxResultBytes,
		MaxFrameBytes:    max(opts.MaxResultBytes, minCallFrame) + frameSlack,
	})
	if opts.InProcess {
		logger := opts.Logger
		if logger != nil && !opts.Console {
			logger = slog.New(withoutConsole{logger.Handler()})
		}
		s.rt = jsrt.New(jsrt.Options{Timeout: opts.Timeout, MaxCodeBytes: opts.MaxCodeBytes, Logger: logger})
	}
	return s
}

// Stats returns the worker processes alive (idle or running code), the
// invocations and checks of code holding a worker slot, and
// Options.Workers. It is cheap: for a metrics collector, at every scrape.
func (s *Sandbox) Stats() (workers, busy, capacity int) {
	return s.pool.stats()
}

// Close retires the workers. Invocations in progress end first or are
// retired when they do; later ones fail with ErrClosed.
func (s *Sandbox) Close() error {
	s.pool.close()
	return nil
}

// Invocation is one run of code.
type Invocation struct {
	// Tenant is whose code it is: the unit of the per-tenant bound.
	Tenant string
	// Code is the module's source (module.exports = function (req) ...).
	Code string
	// Req is the code's req, JSON-compatible values; req.client is added
	// from Host.
	Req map[string]any
	// Timeout bounds the run, waiting for a worker included. Zero:
	// Options.Timeout. ctx's deadline applies too.
	Timeout time.Duration
	// Host is what the code may call: carried out in this process, on the
	// worker's behalf.
	Host jsrt.Host
	// Log are attributes added to every console line (tenant, reactor).
	Log []slog.Attr
}

// Run runs inv and returns what the code returned, as JSON-compatible
// values. Errors: ErrBusy (no worker in time; nothing ran), ErrClosed,
// *jsrt.Error (the code threw, was interrupted at its deadline, or failed
// in the runtime), *StopError (the worker was killed or died: time, memory,
// crash), and other errors for failures of the sandbox itself (a worker
// that cannot start).
func (s *Sandbox) Run(ctx context.Context, inv Invocation) (any, error) {
	budget := inv.Timeout
	if budget <= 0 {
		budget = s.opts.Timeout
	}
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	release, err := s.pool.admit.admit(ctx, inv.Tenant, deadline)
	if err != nil {
		return nil, err
	}
	defer release()
	if s.rt != nil {
		return s.runInProcess(ctx, inv, deadline)
	}
	w, err := s.pool.get()
	if err != nil {
		s.opts.Logger.Error("sandbox: no worker", "err", err)
		return nil, err
	}
	out, healthy, err := s.runOn(ctx, w, inv, deadline, budget)
	s.pool.put(w, healthy)
	return out, err
}

func (s *Sandbox) runInProcess(ctx context.Context, inv Invocation, deadline time.Time) (any, error) {
	p, err := s.rt.Compile(inv.Code)
	if err != nil {
		return nil, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the code does not compile: " + err.Error()}
	}
	out, err := s.rt.Run(jsrt.WithTimeout(ctx, time.Until(deadline)), p, inv.Req, inv.Host)
	var size int
	if err == nil {
		b, merr := json.Marshal(out)
		size = len(b)
		if merr != nil {
			return nil, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the result cannot be encoded as JSON"}
		}
	} else if je, ok := err.(*jsrt.Error); ok && (je.Body != nil || len(je.Errors) > 0) {
		b, _ := json.Marshal(je)
		size = len(b)
	}
	if int64(size) > s.opts.MaxResultBytes {
		return nil, &TooLargeError{Limit: s.opts.MaxResultBytes}
	}
	return out, err
}

// runOn runs inv on worker w. healthy reports whether w may be used again.
func (s *Sandbox) runOn(ctx context.Context, w *process, inv Invocation, deadline time.Time, budget time.Duration) (out any, healthy bool, err error) {
	reqJSON, err := json.Marshal(inv.Req)
	if err != nil {
		return nil, true, &jsrt.Error{Kind: jsrt.RuntimeFailure, Status: 500, Message: "the request cannot be given to the code"}
	}
	hash := codeHash(inv.Code)
	req := runRequest{
		Hash: hash, Req: reqJSON, TimeoutMS: max(1, time.Until(deadline).Milliseconds()),
		Client: inv.Host.Client != nil, Fetch: inv.Host.Fetch != nil,
		Console: s.opts.Console && s.opts.Logger.Enabled(ctx, slog.LevelDebug),
	}
	if !w.known[hash] {
		if len(w.known) >= maxKnownPrograms {
			req.Forget = true
			clear(w.known)
		}
		req.Code = inv.Code
	}

	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	watchdog := time.AfterFunc(time.Until(deadline)+killGrace, func() { w.kill(stopTime) })
	defer watchdog.Stop()
	stopOnCancel := context.AfterFunc(ctx, func() {
		if ctx.Err() == context.Canceled {
			w.kill(stopCanceled)
		}
	})
	defer stopOnCancel()

	lost := func() (any, bool, error) {
		cause := w.died()
		if cause == stopCrashed || cause == stopMemory || cause == stopStack {
			s.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "sandbox: a worker died running code"+w.crashLine(), inv.Log...)
		}
		return nil, false, s.stopError(cause, budget)
	}
	if len(reqJSON) > retireIOBytes {
		w.large = true
	}
	if err := writeValueFrame(w.w, frameRun, req, reqJSON); err != nil {
		return lost()
	}
	lines := 0
	for {
		typ, body, err := readFrame(w.r, w.maxFrame)
		if err != nil {
			if err == errFrameTooLarge {
				w.kill(stopProtocol)
			}
			return lost()
		}
		switch typ {
		case frameConsole:
			if lines++; lines <= maxConsoleLines {
				s.console(ctx, body, inv.Log)
			}
		case frameCall:
			var call hostCall
			reply := callReply{Error: "the host could not read the call"}
			if call.Arg, err = splitValue(body, &call); err == nil {
				reply = s.hostCall(ctx, inv.Host, call)
			}
			if len(body) > retireIOBytes || len(reply.Value) > retireIOBytes {
				w.large = true
			}
			if err := writeValueFrame(w.w, frameReply, reply, reply.Value); err != nil {
				return lost()
			}
		case frameResult:
			var res runResult
			if res.Value, err = splitValue(body, &res); err != nil {
				w.kill(stopProtocol)
				return lost()
			}
			w.cpu = res.CPUSeconds
			if len(body) > retireIOBytes || res.TooLarge || res.HeapBytes > min(retireHeapBytes, s.opts.MemoryBytes/4) {
				w.large = true
			}
			if res.TooLarge || int64(len(res.Value)) > s.opts.MaxResultBytes {
				return nil, true, &TooLargeError{Limit: s.opts.MaxResultBytes}
			}
			// The worker holds the compiled code once it has run it; a
			// failure before that (the code did not compile there) sends
			// the code again next time.
			if res.Error == nil || res.Error.Kind == jsrt.Thrown {
				w.known[hash] = true
			}
			if res.Error != nil {
				// The worker exits after a run it stopped for time.
				return nil, res.Error.Kind != jsrt.Timeout, res.Error
			}
			var v any
			if len(res.Value) > 0 {
				if err := json.Unmarshal(res.Value, &v); err != nil {
					w.kill(stopProtocol)
					return lost()
				}
			}
			return v, true, nil
		default:
			w.kill(stopProtocol)
			return lost()
		}
	}
}

// console logs one line of the code's console output, or a failure the
// runtime reported, with the invocation's attributes.
func (s *Sandbox) console(ctx context.Context, body []byte, attrs []slog.Attr) {
	var line consoleLine
	// Without Console the worker sends no console line (runRequest); a
	// worker is where tenant code runs, so its word is not relied on.
	if json.Unmarshal(body, &line) != nil || !s.opts.Console && strings.HasPrefix(line.Source, "console.") {
		return
	}
	level := slog.LevelDebug
	if line.Level > int(slog.LevelDebug) {
		level = slog.LevelError
	}
	all := append(append(make([]slog.Attr, 0, len(attrs)+1), attrs...), slog.String("source", clip(line.Source, 64)))
	s.opts.Logger.LogAttrs(ctx, level, clip(line.Line, 8<<10), all...)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// hostCall carries out a client method or a fetch for the code.
func (s *Sandbox) hostCall(ctx context.Context, host jsrt.Host, call hostCall) callReply {
	fail := func(msg string) callReply { return callReply{Error: msg} }
	if call.Method == "fetch" {
		if host.Fetch == nil {
			return fail("fetch is not available")
		}
		var req jsrt.FetchRequest
		if json.Unmarshal(call.Arg, &req) != nil {
			return fail("fetch: the request could not be read")
		}
		res, err := host.Fetch.Fetch(ctx, &req)
		if err != nil {
			return fail(err.Error())
		}
		return encodeReply(res)
	}
	c := host.Client
	if c == nil {
		return fail("req.client is not available")
	}
	var (
		v   any
		err error
	)
	switch call.Method {
	case "tokenize", "detokenize":
		// The code's JSON goes to the client as it came: the client
		// checks and decodes it once (no decoding here to encode again).
		body := json.RawMessage(call.Arg)
		if call.Method == "tokenize" {
			v, err = c.Tokenize(ctx, body)
		} else {
			v, err = c.Detokenize(ctx, body)
		}
	case "getToken", "deleteToken", "getTokenIntent", "deleteTokenIntent":
		var id string
		if json.Unmarshal(call.Arg, &id) != nil {
			return fail(call.Method + ": the id must be a string")
		}
		switch call.Method {
		case "getToken":
			v, err = c.GetToken(ctx, id)
		case "deleteToken":
			err = c.DeleteToken(ctx, id)
		case "getTokenIntent":
			v, err = c.GetTokenIntent(ctx, id)
		default:
			err = c.DeleteTokenIntent(ctx, id)
		}
	default:
		return fail("unknown host method")
	}
	if err != nil {
		return fail(err.Error())
	}
	return encodeReply(v)
}

func encodeReply(v any) callReply {
	b, err := json.Marshal(v)
	if err != nil {
		return callReply{Error: "the host returned a value the code cannot use"}
	}
	return callReply{Value: b}
}

func codeHash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// Compile checks code in a worker, as jsrt.Runtime.Compile does (size,
// syntax, the module body runs once and must export a function), and
// remembers what it found by the code's hash. It returns nil or a
// *jsrt.CompileError explaining the refusal: a worker stopped while
// checking (for time, memory or a crash) is a CompileError too. ErrBusy and
// ErrClosed as for Run, and other errors when no worker can start.
func (s *Sandbox) Compile(ctx context.Context, tenant, code string) error {
	if len(code) > s.opts.MaxCodeBytes {
		return &jsrt.CompileError{Message: "the code is too large"}
	}
	hash := codeHash(code)
	s.cacheMu.Lock()
	ce, ok := s.compiled[hash]
	s.cacheMu.Unlock()
	if ok {
		return copyCompileError(ce)
	}
	deadline := time.Now().Add(s.opts.Timeout)
	release, err := s.pool.admit.admit(ctx, tenant, deadline)
	if err != nil {
		return err
	}
	defer release()
	var cacheable bool
	if s.rt != nil {
		_, err := s.rt.Compile(code)
		ce, cacheable = asCompileError(err), true
	} else {
		w, err := s.pool.get()
		if err != nil {
			s.opts.Logger.Error("sandbox: no worker", "err", err)
			return err
		}
		var healthy bool
		ce, healthy = s.compileOn(w, code, deadline)
		cacheable = healthy
		s.pool.put(w, healthy)
	}
	if ce != nil && strings.HasPrefix(ce.Message, "loading the module failed") {
		cacheable = false // a limit hit while loading: it may pass next time
	}
	if cacheable {
		s.cacheMu.Lock()
		if len(s.compiled) >= compileCacheSize {
			clear(s.compiled)
		}
		s.compiled[hash] = ce
		s.cacheMu.Unlock()
	}
	return copyCompileError(ce)
}

// compileOn checks code on worker w.
func (s *Sandbox) compileOn(w *process, code string, deadline time.Time) (ce *jsrt.CompileError, healthy bool) {
	watchdog := time.AfterFunc(time.Until(deadline)+killGrace, func() { w.kill(stopTime) })
	defer watchdog.Stop()
	var out compiled
	err := writeFrame(w.w, frameCompile, compileRequest{Code: code})
	if err == nil {
		err = w.expect(frameCompiled, &out)
	}
	if err != nil {
		se := s.stopError(w.died(), s.opts.Timeout)
		return &jsrt.CompileError{Message: "checking the code was stopped: " + se.Message}, false
	}
	// A module body stopped at its deadline may have left a goroutine in
	// an uninterruptible built-in: that worker is not used again.
	return out.Error, out.Error == nil || !strings.HasPrefix(out.Error.Message, "loading the module failed")
}

func asCompileError(err error) *jsrt.CompileError {
	var ce *jsrt.CompileError
	if err == nil {
		return nil
	}
	if errors.As(err, &ce) {
		return ce
	}
	return &jsrt.CompileError{Message: "the code could not be checked"}
}

// copyCompileError returns a copy (callers may keep or change it) as an
// error, nil for nil.
func copyCompileError(ce *jsrt.CompileError) error {
	if ce == nil {
		return nil
	}
	c := *ce
	return &c
}

// Checked returns what Compile found for code, if it is remembered: known
// is false when code has not been checked (or was forgotten). It never
// starts a worker.
func (s *Sandbox) Checked(code string) (err error, known bool) {
	if len(code) > s.opts.MaxCodeBytes {
		return &jsrt.CompileError{Message: "the code is too large"}, true
	}
	s.cacheMu.Lock()
	ce, ok := s.compiled[codeHash(code)]
	s.cacheMu.Unlock()
	return copyCompileError(ce), ok
}

// withoutConsole drops the code's console lines (source console.<method>)
// and passes the runtime's own: in process, without Options.Console.
type withoutConsole struct{ slog.Handler }

func (h withoutConsole) Handle(ctx context.Context, r slog.Record) error {
	console := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "source" {
			console = strings.HasPrefix(a.Value.String(), "console.")
		}
		return true
	})
	if console {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h withoutConsole) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withoutConsole{h.Handler.WithAttrs(attrs)}
}

func (h withoutConsole) WithGroup(name string) slog.Handler {
	return withoutConsole{h.Handler.WithGroup(name)}
}
