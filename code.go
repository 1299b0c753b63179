package tokenvault

import (
	"context"
	"log/slog"
	"time"

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
	MaxFetchesPerInvocation = reactors.MaxFetchesPerInvocation
	MaxFetchRequestBytes    = reactors.MaxFetchRequestBytes
	MaxFetchResponseBytes   = reactors.MaxFetchResponseBytes
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
	return v.sandboxCode().Check(ctx, tenant, code, field)
}

// sandboxCode is the checking and running of tenant code
// (internal/reactors) over the Vault's sandbox, outbound client and
// result limit. It is a few words, built where it is used.
func (v *Vault) sandboxCode() *reactors.Code {
	return &reactors.Code{Sandbox: v.code, HTTPClient: v.httpClient, MaxResultBytes: v.codeMaxResult}
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
	if err, known := t.v.sandboxCode().Checked(code, field); known {
		return err
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
