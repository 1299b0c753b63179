package reactors

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Limits on the fetch calls of one invocation. The worker asks; the Vault
// carries the request out through the outbound policy of proxies.
const (
	MaxFetchesPerInvocation = 20
	MaxFetchRequestBytes    = 1 << 20
	MaxFetchResponseBytes   = 5 << 20
)

// Code checks and runs tenant code (reactors, formulas, proxy transforms)
// in sandbox worker processes, and explains what comes back in the
// vault's errors. The root builds one from its options; its zero value is
// not usable.
type Code struct {
	// Sandbox runs the code; every check and every run goes through it.
	Sandbox *sandbox.Sandbox
	// HTTPClient carries out the code's fetch calls: the Vault's outbound
	// client, so the outbound policy of proxies applies.
	HTTPClient *http.Client
	// MaxResultBytes is what one run may give back (Options.Code.MaxResultBytes,
	// resolved): a transform's body over it is TooLarge.
	MaxResultBytes int64
}

// Run is one run of tenant code.
type Run struct {
	Tenant string
	Code   string
	Req    map[string]any
	// Timeout of the run; zero means the sandbox's.
	Timeout time.Duration
	// Client is req.client; nil makes it null.
	Client jsrt.Client
	// Log identifies the code in its console lines, after the tenant.
	Log []slog.Attr
}

// Check checks code in the sandbox for tenant, explaining a refusal on
// field: Invalid (a syntax error, with its line, or a module body that
// throws or is stopped), Unprocessable (no function exported), Unavailable
// (the tenant has too many invocations running).
func (c *Code) Check(ctx context.Context, tenant, code, field string) error {
	return compileRefusal(c.Sandbox.Compile(ctx, tenant, code), field)
}

// Checked is the outcome of checking code (nil, or the refusal explained
// on field) when the sandbox knows it without running a worker, and known
// false otherwise.
func (c *Code) Checked(code, field string) (err error, known bool) {
	if err, known := c.Sandbox.Checked(code); known {
		return compileRefusal(err, field), true
	}
	return nil, false
}

// Run runs r in the sandbox, with fetch carried out here on its behalf
// (bounded by MaxFetchesPerInvocation and the sizes above). A failure is
// an *unit.Error: CodeFailed with the code's own message (never a host
// detail), TooLarge for a result over MaxResultBytes, Unavailable when no
// worker is free or the sandbox is closing, or Internal.
func (c *Code) Run(ctx context.Context, r Run) (any, error) {
	host := jsrt.Host{Fetch: &fetcher{client: c.HTTPClient}}
	if r.Client != nil {
		host.Client = r.Client
	}
	out, err := c.Sandbox.Run(ctx, sandbox.Invocation{
		Tenant: r.Tenant, Code: r.Code, Req: r.Req, Timeout: r.Timeout, Host: host,
		Log: append([]slog.Attr{slog.String("tenant", r.Tenant)}, r.Log...),
	})
	if err != nil {
		return nil, codeError(err)
	}
	return out, nil
}

// ResultTooLarge is the TooLarge error for what of tenant code over
// MaxResultBytes, naming the limit.
func (c *Code) ResultTooLarge(what string) *unit.Error {
	return resultTooLarge(what, c.MaxResultBytes)
}

func resultTooLarge(what string, limit int64) *unit.Error {
	return &unit.Error{Kind: unit.TooLarge, Message: fmt.Sprintf("%s is larger than %s, the most this vault accepts from code (code-max-result-bytes)", what, sandbox.FormatBytes(limit))}
}
