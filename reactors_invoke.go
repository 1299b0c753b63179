package tokenvault

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Reactor invocation timeouts (the spec's timeout_ms, asynchronous calls
// only).
const (
	DefaultReactorTimeout = 10 * time.Second
	MinReactorTimeout     = 10 * time.Second
	MaxReactorTimeout     = 210 * time.Second
)

// InvokeReactorRequest is the body of InvokeReactor.
type InvokeReactorRequest struct {
	// Args are the arguments; {{ <token_id> }} expressions anywhere in them
	// are detokenized (token:use) before the contract is applied.
	Args any `json:"args"`
	// CallbackURL, when set, makes the invocation asynchronous: it returns
	// at once and the result is POSTed to this URL (see Webhook).
	CallbackURL string `json:"callback_url,omitempty"`
	// TimeoutMS bounds an asynchronous run: 10000 (default) to 210000,
	// whatever Options.Code.Timeout, which bounds synchronous runs.
	TimeoutMS int `json:"timeout_ms,omitempty"`
}

// ReactorResponse is what an invocation returns: Raw is what the code
// returned as raw, Tokens what it returned under tokenize, tokenized. An
// asynchronous invocation returns only its InvocationID.
type ReactorResponse = reactors.Response

// invocation is everything a run needs, gathered in one transaction.
type invocation struct {
	id        string
	tenantID  string
	reactorID string
	code      string
	req       map[string]any
	client    *credential // the reactor's application, or nil
	caller    credential
	// by and traceID are the caller as events name it and its call's
	// trace id, for the event of an asynchronous invocation's end.
	by      actor
	traceID string
	// purpose is the caller's purpose of access: the reactor's own calls
	// name it too, when it runs in the background as when it runs in the
	// call.
	purpose string
}

// InvokeReactor runs a reactor. It requires token:use, and token:use on
// each container of every token the arguments detokenize (at most
// MaxDetokenizedTokens). The code gets req.args (detokenized, then shaped
// by the formula's request_parameters), req.configuration and req.client
// (the reactor's application, or null). What the code returns under
// tokenize is tokenized with the reactor's application, or the caller's
// key when it has none.
//
// Returns Invalid (bad args: a missing or uncastable parameter, a number
// beyond a float64's range, text that is not Unicode; an unknown token),
// PermissionDenied, NotFound,
// CodeFailed with the status of the error class the code threw, TooLarge
// when what the code returned (or threw) is over
// Options.Code.MaxResultBytes as JSON, and Unavailable when no worker was
// free in time.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) InvokeReactor(ctx context.Context, key Credential, id string, req InvokeReactorRequest) (*ReactorResponse, error) {
	fe := unit.FieldErrors{}
	timeout := DefaultReactorTimeout
	if req.TimeoutMS != 0 {
		timeout = time.Duration(req.TimeoutMS) * time.Millisecond
		if timeout < MinReactorTimeout || timeout > MaxReactorTimeout {
			fe.Add("timeout_ms", "must be between %d and %d", MinReactorTimeout.Milliseconds(), MaxReactorTimeout.Milliseconds())
		}
	}
	if req.CallbackURL != "" {
		if u, err := url.Parse(req.CallbackURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fe.Add("callback_url", "must be an absolute http or https URL")
		} else if !v.outbound.AllowPrivate && !outbound.PublicHost(u.Hostname()) {
			// Known now, not only when the delivery is refused after
			// its retries: the caller hears it.
			fe.Add("callback_url", "is a private, loopback or link-local address, which this Vault does not call")
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	args, err := jsontext.Value(req.Args, "args")
	if err != nil {
		return nil, err
	}
	inv, err := v.prepareInvocation(ctx, keyCredential(key), id, args)
	if err != nil {
		return nil, err
	}
	if req.CallbackURL != "" {
		if err := v.startAsync(inv, req.CallbackURL, timeout); err != nil {
			return nil, err
		}
		return &ReactorResponse{InvocationID: inv.id}, nil
	}
	return v.runInvocation(ctx, inv, 0)
}

// prepareInvocation authorizes the caller, detokenizes and checks the
// arguments, and logs the invocation, in one transaction.
func (v *Vault) prepareInvocation(ctx context.Context, c credential, id string, args any) (*invocation, error) {
	var inv *invocation
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorizeAs(c, PermTokenUse)
		if err != nil {
			return err
		}
		rec, f, err := reactors.MustReactor(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		detok, err := t.detokenize(p, PermTokenUse, args, "Token used by reactor", ChannelReactor)
		if err != nil {
			return prefixFields(err, "args")
		}
		var params []RequestParameter
		code := rec.Code
		if f != nil {
			params, code = f.RequestParameters, f.Code
		}
		shaped, err := reactors.PrepareArgs(params, detok)
		if err != nil {
			return err
		}
		inv = &invocation{
			id: t.v.ids.Next(t.Now), tenantID: p.TenantID, reactorID: rec.ID, code: code, caller: c, purpose: p.Purpose,
			req: map[string]any{"args": shaped, "configuration": rec.Configuration},
		}
		if rec.ApplicationID != "" {
			ac := appCredential(p.TenantID, rec.ApplicationID)
			inv.client = &ac
		}
		inv.by, inv.traceID = p.Actor(), unit.TraceID(ctx)
		if err := reactors.EmitInvocation(t.Tx, p.TenantID, EventReactorInvoked, p.Actor(), &reactors.InvocationEvent{ID: inv.id, ReactorID: rec.ID, Status: "invoked"}); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityReactor, rec.ID, OpInvoke, "Reactor invoked")
	})
	return inv, err
}

// prefixFields puts prefix before the field paths of an Invalid error from
// detokenizing a sub-document.
func prefixFields(err error, prefix string) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 || errors.Is(err, access.ErrPurposeRequired) {
		return err // the purpose is the call's, not a field of the document
	}
	out := *e
	out.Fields = unit.FieldErrors{}
	for k, v := range e.Fields {
		if k == "" {
			out.Fields[prefix] = v
		} else if k[0] == '[' {
			out.Fields[prefix+k] = v
		} else {
			out.Fields[prefix+"."+k] = v
		}
	}
	return &out
}

// runInvocation runs the code, for timeout (zero: Options.Code.Timeout),
// and tokenizes what it asks to.
func (v *Vault) runInvocation(ctx context.Context, inv *invocation, timeout time.Duration) (*ReactorResponse, error) {
	if inv.purpose != "" {
		ctx = unit.WithPurpose(ctx, inv.purpose)
	}
	result, err := v.runCode(ctx, codeRun{
		kind: CodeReactor, tenant: inv.tenantID, code: inv.code, req: inv.req, timeout: timeout, client: inv.client,
		log: []slog.Attr{slog.String("reactor", inv.reactorID)},
	})
	if err != nil {
		return nil, err
	}
	raw, tk, err := reactors.ReactorResult(result)
	if err != nil {
		return nil, err
	}
	out := &ReactorResponse{Raw: raw}
	if tk != nil {
		by := inv.caller
		if inv.client != nil {
			by = *inv.client
		}
		tokens, err := v.tokenizeAs(ctx, by, tk)
		if err != nil {
			return nil, prefixFields(err, "tokenize")
		}
		out.Tokens = tokens
	}
	return out, nil
}

// jsClient is req.client: the Vault's token operations, acting as the
// reactor's (or proxy's) application. What the code sends arrives as the
// worker wrote it (json.RawMessage), decoded once by tokenizeBody, or in
// process as plain values, copied once; what it returns is encoded once,
// by the sandbox for the worker, or converted for the code in process.
type jsClient struct {
	v *Vault
	c credential
}

func (j *jsClient) Tokenize(ctx context.Context, body any) (any, error) {
	return j.v.tokenizeAs(ctx, j.c, body)
}

func (j *jsClient) GetToken(ctx context.Context, id string) (any, error) {
	tok, err := j.v.getTokenAs(ctx, j.c, id)
	if err != nil {
		return nil, err
	}
	return tok, nil
}

func (j *jsClient) DeleteToken(ctx context.Context, id string) error {
	return j.v.deleteTokenAs(ctx, j.c, id)
}

func (j *jsClient) Detokenize(ctx context.Context, body any) (any, error) {
	return j.v.detokenizeAs(ctx, j.c, body)
}

func (j *jsClient) GetTokenIntent(ctx context.Context, id string) (any, error) {
	in, err := j.v.getTokenIntentAs(ctx, j.c, id)
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (j *jsClient) DeleteTokenIntent(ctx context.Context, id string) error {
	return j.v.deleteTokenIntentAs(ctx, j.c, id)
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
// here on its behalf, and counts the run in Options.Metrics.
func (v *Vault) runCode(ctx context.Context, r codeRun) (any, error) {
	run := reactors.Run{Tenant: r.tenant, Code: r.code, Req: r.req, Timeout: r.timeout, Log: r.log}
	if r.client != nil {
		run.Client = &jsClient{v: v, c: *r.client}
	}
	var start time.Time
	if v.metrics != nil {
		start = time.Now()
	}
	out, err := v.sandboxCode().Run(ctx, run)
	if v.metrics != nil {
		v.metrics.CodeRun(r.kind, codeOutcome(err), time.Since(start))
	}
	return out, err
}
