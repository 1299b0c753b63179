package jsrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// Options configure a Runtime. Zero values mean the documented defaults.
type Options struct {
	// Timeout bounds a run when ctx has no earlier deadline. Default 10s.
	Timeout time.Duration
	// MaxCodeBytes bounds the code Compile accepts. Default 256 KiB.
	MaxCodeBytes int
	// MaxMemoryBytes is the heap growth that stops a run. Default 64 MiB.
	MaxMemoryBytes uint64
	// Logger receives console output at debug level. Nil: discarded.
	Logger *slog.Logger
}

// Runtime compiles and runs code. It is safe for concurrent use.
type Runtime struct {
	opts Options

	mu    sync.Mutex
	cache map[string]*Program
}

// maxCachedPrograms bounds the compile cache; when full it starts over.
const maxCachedPrograms = 1024

// maxCallStack bounds recursion.
const maxCallStack = 1024

// New returns a Runtime.
func New(opts Options) *Runtime {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxCodeBytes <= 0 {
		opts.MaxCodeBytes = 256 << 10
	}
	if opts.MaxMemoryBytes == 0 {
		opts.MaxMemoryBytes = 64 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Runtime{opts: opts, cache: map[string]*Program{}}
}

// Program is compiled code whose module.exports is a function.
type Program struct {
	prog *goja.Program
	hash string
}

// Hash is the SHA-256 of the code, hex.
func (p *Program) Hash() string { return p.hash }

// CompileError explains why code was refused.
type CompileError struct {
	// Line and Column are the 1-based position of a syntax error; 0 when
	// not applicable.
	Line, Column int
	Message      string
	// NotAFunction is set when the code compiled but does not export a
	// function.
	NotAFunction bool
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// The module wrapper keeps the code's first line on line 1.
const (
	wrapHead = "(function (module, exports, require) {"
	wrapTail = "\n})"
)

// Compile checks code and caches the result by its hash.
func (r *Runtime) Compile(code string) (*Program, error) {
	if len(code) > r.opts.MaxCodeBytes {
		return nil, &CompileError{Message: fmt.Sprintf("the code is larger than %d bytes", r.opts.MaxCodeBytes)}
	}
	sum := sha256.Sum256([]byte(code))
	hash := hex.EncodeToString(sum[:])
	r.mu.Lock()
	p, ok := r.cache[hash]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	prog, err := goja.Compile("code.js", wrapHead+code+wrapTail, false)
	if err != nil {
		return nil, syntaxError(err)
	}
	p = &Program{prog: prog, hash: hash}
	// Load the module once, with a short deadline, to see what it exports.
	ctx, cancel := context.WithTimeout(context.Background(), min(r.opts.Timeout, time.Second))
	defer cancel()
	s := r.newSandbox(nil)
	stop := s.watch(ctx, r.opts.MaxMemoryBytes)
	_, err = s.load(p)
	stop()
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			return nil, ce
		}
		var je *Error
		if errors.As(err, &je) {
			return nil, &CompileError{Message: "loading the module failed: " + je.Message}
		}
		return nil, &CompileError{Message: "loading the module failed"}
	}
	r.mu.Lock()
	if len(r.cache) >= maxCachedPrograms {
		r.cache = map[string]*Program{}
	}
	r.cache[hash] = p
	r.mu.Unlock()
	return p, nil
}

// syntaxError turns a goja compile error into a CompileError with the
// position in the caller's code.
func syntaxError(err error) error {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		// goja reports "code.js: Line 2:10 Unexpected token ; (and 2 more errors)".
		if m := syntaxPosition.FindStringSubmatch(se.Message); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			if line == 1 {
				col -= len(wrapHead)
			}
			return &CompileError{Line: line, Column: max(col, 1), Message: m[3]}
		}
		return &CompileError{Message: "syntax error"}
	}
	var ce *goja.CompilerReferenceError
	if errors.As(err, &ce) {
		return &CompileError{Message: ce.Message}
	}
	return &CompileError{Message: "the code does not compile"}
}

var syntaxPosition = regexp.MustCompile(`Line (\d+):(\d+) (.*?)(?: \(and \d+ more errors?\))?$`)

// Run calls the program's exported function with req (plain JSON values)
// and client, and returns what it returned (or its promise resolved to),
// as plain JSON values (numbers as json.Number).
func (r *Runtime) Run(ctx context.Context, p *Program, req map[string]any, client Client) (out any, err error) {
	defer func() {
		// goja reports JS errors as values; a panic here is a host bug, and
		// must not take the process down or reach the caller as a stack.
		if rec := recover(); rec != nil {
			r.opts.Logger.Error("jsrt: panic in run", "panic", fmt.Sprint(rec))
			out, err = nil, &Error{Kind: RuntimeFailure, Status: 500, Message: "the code failed"}
		}
	}()
	if req == nil {
		req = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	s := r.newSandbox(client)
	s.ctx = ctx
	stop := s.watch(ctx, r.opts.MaxMemoryBytes)
	defer stop()
	fn, err := s.load(p)
	if err != nil {
		return nil, err
	}
	arg, err := s.toJS(req)
	if err != nil {
		return nil, err
	}
	if client == nil {
		arg.ToObject(s.vm).Set("client", goja.Null())
	} else {
		arg.ToObject(s.vm).Set("client", s.clientObject())
	}
	res, err := fn(goja.Undefined(), arg)
	if err != nil {
		return nil, s.failure(err)
	}
	if pr, ok := res.Export().(*goja.Promise); ok {
		switch pr.State() {
		case goja.PromiseStateFulfilled:
			res = pr.Result()
		case goja.PromiseStateRejected:
			return nil, s.thrown(pr.Result())
		default:
			return nil, &Error{Kind: Timeout, Status: 500, Message: "the code's promise never settled"}
		}
	}
	return s.fromJS(res)
}

// Client is the host's view given to code as req.client. Methods are called
// synchronously; an error is thrown into the code as an Error with the
// error's message, which the host must keep free of secrets.
type Client interface {
	Tokenize(ctx context.Context, body any) (any, error)
	GetToken(ctx context.Context, id string) (any, error)
	DeleteToken(ctx context.Context, id string) error
	Detokenize(ctx context.Context, body any) (any, error)
}

// decodeJSON decodes b keeping numbers exact.
func decodeJSON(b string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
