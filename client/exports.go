package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// ExportTokens streams an export of the tenant's tokens (POST
// /tokens/export) to w, the age file encrypted to req.Recipient, then
// fetches its signed manifest (GET /exports/{id}), as
// tokenvault.Vault.ExportTokens returns it. An export the approval policy
// holds returns a *tokenvault.ApprovalRequired and writes nothing.
// req.OnStart, when set, is called with the export's id before the first
// byte is written to w.
//
// Errors: those of the call, as in process; a transfer cut off (the
// server aborts an export that fails once streaming, and then stores no
// manifest) is Unavailable, and w's error is returned as it is.
func (c *Client) ExportTokens(ctx context.Context, key tokenvault.Credential, req tokenvault.ExportRequest, w io.Writer) (*tokenvault.ExportManifest, error) {
	return c.exportTokens(ctx, key, "", req, w)
}

// ExportTokensApproved is ExportTokens of a request held to approval, with
// the id of its applied change (sent as SVC-APPROVAL-ID): once.
func (c *Client) ExportTokensApproved(ctx context.Context, key tokenvault.Credential, approvalID string, req tokenvault.ExportRequest, w io.Writer) (*tokenvault.ExportManifest, error) {
	if approvalID == "" {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "an approval id is required"}
	}
	return c.exportTokens(ctx, key, approvalID, req, w)
}

// GetExport returns the signed manifest of a complete export (GET
// /exports/{id}).
func (c *Client) GetExport(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.ExportManifest, error) {
	var out tokenvault.ExportManifest
	if err := c.do(ctx, call{method: "GET", path: "/exports/" + esc(id), key: key, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) exportTokens(ctx context.Context, key tokenvault.Credential, approvalID string, req tokenvault.ExportRequest, w io.Writer) (*tokenvault.ExportManifest, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the request cannot be encoded as JSON: " + err.Error()}
	}
	hr, err := http.NewRequestWithContext(ctx, "POST", c.base+"/tokens/export", bytes.NewReader(b))
	if err != nil {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "bad request: " + err.Error()}
	}
	hr.Header.Set(apiKeyHeader, string(key))
	hr.Header.Set("Content-Type", jsonContentType)
	if approvalID != "" {
		hr.Header.Set("SVC-APPROVAL-ID", approvalID)
	}
	res, err := c.stream.Do(hr)
	if err != nil {
		return nil, c.failed(ctx, "cannot be reached", err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode >= 400:
		return nil, problem(res, false)
	case res.StatusCode == http.StatusAccepted:
		return nil, approvalRequired(res)
	case res.StatusCode != http.StatusOK:
		return nil, &tokenvault.Error{Kind: tokenvault.Internal, Message: "unexpected answer " + res.Status}
	}
	id := res.Header.Get("SVC-EXPORT-ID")
	if id == "" {
		return nil, &tokenvault.Error{Kind: tokenvault.Internal, Message: "the answer names no export (SVC-EXPORT-ID)"}
	}
	if req.OnStart != nil {
		req.OnStart(id)
	}
	if _, err := io.Copy(w, &readErr{r: res.Body}); err != nil {
		if re, ok := err.(*readFailed); ok {
			if ctx.Err() != nil {
				return nil, c.failed(ctx, "", re.err)
			}
			return nil, &tokenvault.Error{Kind: tokenvault.Unavailable, Message: "the export's transfer was cut off: no manifest was stored", Err: re.err}
		}
		return nil, err
	}
	return c.GetExport(ctx, key, id)
}

// readErr tells the body's read errors (the transfer) from the writer's.
type readErr struct{ r io.Reader }

type readFailed struct{ err error }

func (e *readFailed) Error() string { return e.err.Error() }

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readFailed{err}
	}
	return n, err
}
