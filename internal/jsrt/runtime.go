package jsrt

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxCodeBytes = 256 << 10
)

// Fixed limits that are not configurable.
const (
	programCacheSize = 1024 // compiled programs kept, least recently used dropped first
	maxCallStackSize = 3000 // JavaScript call depth (a native-recursion overflow costs O(depth²))
	maxPendingTimers = 1000 // setTimeout/setInterval callbacks waiting at once
	stopGrace        = 25 * time.Millisecond
)

// Options configure a Runtime. Zero values mean the documented defaults.
type Options struct {
	// Timeout bounds each invocation (and the evaluation of a module in
	// Compile) when ctx has no earlier deadline. Zero means 10s.
	Timeout time.Duration

	// MaxCodeBytes is the largest code Compile accepts. Zero means 256 KiB.
	MaxCodeBytes int

	// Logger receives console.log/info/warn/error/debug output at
	// slog.LevelDebug with the attribute "source" = "console.<method>".
	// Nil discards console output.
	Logger *slog.Logger
}

// Runtime compiles and runs code. It is safe for concurrent use: every
// invocation gets its own goja runtime, so nothing one invocation does is
// visible to another.
type Runtime struct {
	opts  Options
	cache *programCache
}

// New returns a Runtime with opts, zero fields replaced by their defaults.
func New(opts Options) *Runtime {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxCodeBytes <= 0 {
		opts.MaxCodeBytes = DefaultMaxCodeBytes
	}
	return &Runtime{opts: opts, cache: newProgramCache(programCacheSize)}
}

// Run calls the program's exported function with one argument, req: the
// fields of req (JSON-compatible Go values) plus req.client, the JS view of
// host.Client, or null when it is nil. The global fetch, in the module body
// too, goes to host.Fetch. When the function returns a promise,
// Run drives the event loop until the promise settles. The result is
// returned as JSON-compatible Go values (map[string]any, []any, string,
// float64, bool, nil; undefined becomes nil).
//
// Every failure is an *Error: Thrown when the code threw or its promise
// rejected, Timeout when the deadline (the earlier of ctx's and
// Options.Timeout) passed, ctx was canceled or the returned promise can
// never settle, and RuntimeFailure for anything else (a result that is not
// JSON-compatible, stack overflow, a host failure). Run never returns
// MemoryLimit: memory is bounded outside jsrt (see "Limits" in the package
// documentation).
func (r *Runtime) Run(ctx context.Context, p *Program, req map[string]any, host Host) (any, error) {
	if p == nil || p.prog == nil {
		return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "no program to run"}
	}
	out, err := r.execute(ctx, func(s *session) (any, error) {
		s.host = host
		fn, err := s.loadModule(p)
		if err == errNotAFunction {
			return nil, &Error{Kind: RuntimeFailure, Status: 500, Message: errNotAFunction.Message}
		}
		if err != nil {
			return nil, err
		}
		arg, err := s.request(req, host.Client)
		if err != nil {
			return nil, err
		}
		return s.call(fn, arg)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// outcome is what a worker hands back to execute.
type outcome struct {
	val any
	err error
}

// execute runs work in a fresh session on its own goroutine and waits for
// it, for the deadline or for ctx. When either ends the invocation, the goja runtime is interrupted; if it does not stop within a
// short grace period (it is inside a long built-in call, which goja cannot
// interrupt), execute returns anyway and the abandoned goroutine ends at its
// next JavaScript instruction.
func (r *Runtime) execute(ctx context.Context, work func(s *session) (any, error)) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	budget := r.opts.Timeout
	if d, ok := ctx.Value(budgetKey{}).(time.Duration); ok && d > 0 {
		budget = d
	}
	started := time.Now()
	deadline := started.Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	s := newSession(r, ctx, started, deadline)
	defer s.cancel()
	if err := ctx.Err(); err != nil {
		s.stop(Timeout, s.timeoutMessage())
		return nil, s.stopErr
	}
	stopOnCtx := context.AfterFunc(s.ctx, func() { s.stop(Timeout, s.timeoutMessage()) })
	defer stopOnCtx()

	done := make(chan outcome, 1)
	go s.work(work, done)
	select {
	case o := <-done:
		return o.val, o.err
	case <-s.stopped:
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case o := <-done:
		return o.val, o.err
	case <-grace.C:
		return nil, s.stopErr
	}
}

// timeoutMessage explains why the session's context ended.
func (s *session) timeoutMessage() string {
	if s.parent.Err() == context.Canceled {
		return "the invocation was canceled"
	}
	return fmt.Sprintf("the code did not finish within %s", s.budget())
}

// budget is the time the session was given, rounded for messages.
func (s *session) budget() time.Duration { return RoundBudget(s.deadline.Sub(s.started)) }

// RoundBudget rounds a time budget for messages: to 100 ms from a second
// up, to the millisecond below.
func RoundBudget(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}

type budgetKey struct{}

// WithTimeout returns a context whose runs get d instead of
// Options.Timeout: an asynchronous invocation, for one, may be given more
// time than a synchronous one. ctx's own deadline still applies.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, budgetKey{}, d)
}
