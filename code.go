package tokenvault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Tenant code (reactors, formulas, proxy transforms) runs in sandbox worker
// processes (internal/sandbox): every check of code when it is saved and
// every run, synchronous or not. This file is the Vault's side of it.

// Limits on the fetch calls of one invocation. The worker asks; the Vault
// carries the request out through the outbound policy of proxies.
const (
	MaxFetchesPerInvocation = 20
	MaxFetchRequestBytes    = 1 << 20
	MaxFetchResponseBytes   = 5 << 20
)

// DefaultCodeMaxResultBytes is Options.Code.MaxResultBytes when zero: what
// one run of tenant code may give back, as JSON.
const DefaultCodeMaxResultBytes = sandbox.DefaultMaxResultBytes

// errCompileFirst is returned from inside a transaction that found code it
// has not checked yet: checking runs the code in a worker, which must not
// happen while a write transaction holds the store. The caller checks it
// and runs the transaction again.
var errCompileFirst = &Error{Kind: Internal, Message: "the code must be checked first"}

// checkCode checks code in the sandbox for tenant, explaining a refusal
// on field: Invalid (a syntax error, with its line, or a module body that
// throws or is stopped), Unprocessable (no function exported), Unavailable
// (the tenant has too many invocations running).
func (v *Vault) checkCode(ctx context.Context, tenant, code, field string) error {
	return compileRefusal(v.code.Compile(ctx, tenant, code), field)
}

// compileRefusal explains the outcome of checking code on field.
func compileRefusal(err error, field string) error {
	var ce *jsrt.CompileError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.NotAFunction:
		e := unit.InvalidField(field, "module.exports must be a function")
		e.Kind, e.Message = Unprocessable, "the code does not export a function"
		return e
	case errors.As(err, &ce) && ce.Line > 0:
		return unit.InvalidField(field, "line %d, column %d: %s", ce.Line, ce.Column, ce.Message)
	case errors.As(err, &ce):
		return unit.InvalidField(field, "%s", ce.Message)
	}
	return sandboxError(err)
}

// codeRun is one run of tenant code.
type codeRun struct {
	kind    CodeKind // for Options.Metrics
	tenant  string
	code    string
	req     map[string]any
	timeout time.Duration // zero: Options.Code.Timeout
	client  *credential   // req.client acts as this application; nil: null
	log     []slog.Attr   // identify the code in console lines
}

// runCode runs code in the sandbox, with req.client and fetch carried out
// here on its behalf.
func (v *Vault) runCode(ctx context.Context, r codeRun) (any, error) {
	host := jsrt.Host{Fetch: &fetcher{v: v}}
	if r.client != nil {
		host.Client = &jsClient{v: v, c: *r.client}
	}
	var start time.Time
	if v.metrics != nil {
		start = time.Now()
	}
	out, err := v.code.Run(ctx, sandbox.Invocation{
		Tenant: r.tenant, Code: r.code, Req: r.req, Timeout: r.timeout, Host: host,
		Log: append([]slog.Attr{slog.String("tenant", r.tenant)}, r.log...),
	})
	if err != nil {
		err = codeError(err)
	}
	if v.metrics != nil {
		v.metrics.CodeRun(r.kind, codeOutcome(err), time.Since(start))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sandboxError translates a failure of the sandbox itself.
func sandboxError(err error) error {
	switch {
	case errors.Is(err, sandbox.ErrBusy):
		return unit.Errorf(Unavailable, "no code worker was free in time: too many invocations of this tenant, or of all tenants, are in progress; retry later")
	case errors.Is(err, sandbox.ErrClosed):
		return unit.Errorf(Unavailable, "the vault is closing")
	}
	return unit.AsInternal(err)
}

// resultTooLarge is the TooLarge error for what of tenant code over
// Options.Code.MaxResultBytes (limit), naming the limit.
func resultTooLarge(what string, limit int64) *Error {
	return &Error{Kind: TooLarge, Message: fmt.Sprintf("%s is larger than %s, the most this vault accepts from code (code-max-result-bytes)", what, sandbox.FormatBytes(limit))}
}

// codeError translates a failure of tenant code into an *Error. It carries
// the code's own message and never a host detail.
func codeError(err error) error {
	var tl *sandbox.TooLargeError
	if errors.As(err, &tl) {
		return resultTooLarge("the code's result", tl.Limit)
	}
	if reason := sandbox.ReasonOf(err); reason != 0 {
		e := &Error{Kind: CodeFailed, Status: 500}
		switch reason {
		case sandbox.StoppedTime:
			e.Stop, e.Message = CodeTimedOut, "the code did not finish in time"
		case sandbox.StoppedMemory:
			e.Stop, e.Message = CodeOutOfMemory, "the code used too much memory"
		default:
			e.Stop, e.Message = CodeCrashed, "the code crashed"
			var se *sandbox.StopError
			if errors.As(err, &se) {
				e.Message = se.Message
			}
		}
		return e
	}
	var je *jsrt.Error
	if !errors.As(err, &je) {
		if e, ok := err.(*Error); ok {
			return e
		}
		return sandboxError(err)
	}
	e := &Error{Kind: CodeFailed, Status: je.Status, Message: je.Message, Fields: je.Errors, Headers: je.Headers, Body: je.Body}
	if len(e.Headers) > 0 {
		// The response the code built is framed by the vault: its
		// Content-Length and hop-by-hop headers are left out, and a
		// header that cannot be sent fails the code (reactors.CodeHeaders).
		h := make(map[string]any, len(e.Headers))
		for k, v := range e.Headers {
			h[k] = v
		}
		sendable, err := reactors.CodeHeaders(h)
		if err != nil {
			return err
		}
		e.Headers = make(map[string]string, len(sendable))
		for k := range sendable {
			e.Headers[k] = sendable.Get(k)
		}
	}
	switch je.Kind {
	case jsrt.RuntimeFailure:
		e.Status = 500
		if e.Message == "" {
			e.Message = "the code failed"
		}
	default:
		if e.Status == 0 {
			e.Status = 500
		}
		if je.Class != "" && je.Class != "CustomHttpResponseError" {
			e.Message = fmt.Sprintf("%s: %s", je.Class, je.Message)
		}
	}
	return e
}

// fetcher carries out the fetch calls of one invocation through the
// Vault's outbound client, so the outbound policy of proxies applies
// (loopback, private and link-local destinations refused unless
// Options.Outbound.AllowPrivateDestinations), bounded in number and size.
type fetcher struct {
	v  *Vault
	mu sync.Mutex
	n  int
}

// Fetch performs one request. Its errors are shown to the code: they
// never quote the URL.
func (f *fetcher) Fetch(ctx context.Context, req *jsrt.FetchRequest) (*jsrt.FetchResponse, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if n > MaxFetchesPerInvocation {
		return nil, fmt.Errorf("fetch: at most %d requests per invocation", MaxFetchesPerInvocation)
	}
	if len(req.Body) > MaxFetchRequestBytes {
		return nil, fmt.Errorf("fetch: the request body is over %d bytes", MaxFetchRequestBytes)
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("fetch: the URL must be an absolute http or https URL")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, errors.New("fetch: the request cannot be sent")
	}
	for _, h := range req.Headers {
		hr.Header.Add(h[0], h[1])
	}
	if err := reactors.CheckHeaders(hr.Header); err != nil {
		return nil, errors.New("fetch: a header cannot be sent")
	}
	res, err := f.v.httpClient.Do(hr)
	if err != nil {
		var ue *url.Error
		switch {
		case errors.Is(err, outbound.ErrPrivateDestination):
			return nil, errors.New("fetch: the destination is in a private network, which this Vault refuses")
		case errors.As(err, &ue) && ue.Timeout(), ctx.Err() != nil:
			return nil, errors.New("fetch: the destination did not answer in time")
		}
		return nil, errors.New("fetch failed: the destination could not be reached")
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxFetchResponseBytes+1))
	if err != nil {
		return nil, errors.New("fetch: the answer could not be read")
	}
	if len(b) > MaxFetchResponseBytes {
		return nil, fmt.Errorf("fetch: the answer is over %d bytes", MaxFetchResponseBytes)
	}
	out := &jsrt.FetchResponse{Status: res.StatusCode, StatusText: http.StatusText(res.StatusCode), URL: u.String(), Body: b}
	for name, values := range res.Header {
		for _, val := range values {
			out.Headers = append(out.Headers, [2]string{name, val})
		}
	}
	return out, nil
}

// uncheckedCode is code a transaction met before it was checked.
type uncheckedCode struct{ tenant, code, field string }

// uncheckedOf is the code a transaction met unchecked (checkCode), which
// updateChecked reads when the transaction function returns.
var uncheckedOf unit.Local[uncheckedCode]

// checkCode, inside a transaction, returns the outcome of checking code
// when the sandbox knows it (nil, or the refusal explained on field).
// Otherwise it returns errCompileFirst and remembers the code:
// updateChecked checks it outside the transaction, once the caller is
// authorized, and runs the transaction again.
func (t *txn) checkCode(tenant, code, field string) error {
	if err, known := t.v.code.Checked(code); known {
		return compileRefusal(err, field)
	}
	*uncheckedOf.Of(t.Tx) = uncheckedCode{tenant: tenant, code: code, field: field}
	return errCompileFirst
}

// updateChecked is update for writes that save code: a transaction that
// meets code not yet checked ends, the code is checked in a worker with
// no transaction open, and the transaction runs again.
func (v *Vault) updateChecked(ctx context.Context, fn func(*txn) error) error {
	for attempt := 0; ; attempt++ {
		var pending *uncheckedCode
		err := v.update(ctx, func(t *txn) error {
			pending = nil
			err := fn(t)
			if u, ok := uncheckedOf.Peek(t.Tx); ok {
				pending = u
			}
			return err
		})
		if err != errCompileFirst || pending == nil || attempt == 3 {
			return err
		}
		if err := v.checkCode(ctx, pending.tenant, pending.code, pending.field); err != nil {
			return err
		}
	}
}
