package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/tokenvault/tokenvault"
)

// Approvals for dangerous operations (tokenvault's approvals.go). A call
// the tenant's approval policy holds (CreateApplication of a management
// application, UpdateApplication widening grants,
// RegenerateApplicationKey, SetApprovalPolicy once a policy exists)
// returns a *tokenvault.ApprovalRequired, as in process.

// approvalRequired decodes a 202 of a route an approval policy can hold.
func approvalRequired(res *http.Response) error {
	var body struct {
		tokenvault.PendingChange
		Key tokenvault.Credential `json:"key"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return &tokenvault.Error{Kind: tokenvault.Internal, Message: "the server's answer cannot be decoded", Err: err}
	}
	return &tokenvault.ApprovalRequired{Change: &body.PendingChange, Key: body.Key}
}

func (c *Client) GetApprovalPolicy(ctx context.Context, key tokenvault.Credential) (*tokenvault.ApprovalPolicy, error) {
	var out tokenvault.ApprovalPolicy
	return &out, c.do(ctx, call{method: "GET", path: "/tenants/self/approval-policy", key: key, out: &out})
}

func (c *Client) SetApprovalPolicy(ctx context.Context, key tokenvault.Credential, req tokenvault.ApprovalPolicy) (*tokenvault.ApprovalPolicy, error) {
	body := map[string]any{"required": req.Required, "approvers": orEmpty(req.Approvers), "operations": orEmpty(req.Operations), "ttl_seconds": req.TTLSeconds}
	var out tokenvault.ApprovalPolicy
	if err := c.do(ctx, call{method: "PUT", path: "/tenants/self/approval-policy", key: key, body: body, out: &out, approval: true}); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) ListApprovals(ctx context.Context, key tokenvault.Credential, req tokenvault.ListApprovalsRequest) (*tokenvault.Page[tokenvault.PendingChange], error) {
	q := pageQuery(url.Values{}, req.PageRequest)
	if req.Status != "" {
		q.Set("status", req.Status)
	}
	var out tokenvault.Page[tokenvault.PendingChange]
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/approvals", q), key: key, out: &out})
}

func (c *Client) GetApproval(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.PendingChange, error) {
	var out tokenvault.PendingChange
	return &out, c.do(ctx, call{method: "GET", path: "/approvals/" + esc(id), key: key, out: &out})
}

func (c *Client) ApproveChange(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.PendingChange, error) {
	var out tokenvault.PendingChange
	return &out, c.do(ctx, call{method: "POST", path: "/approvals/" + esc(id) + "/approve", key: key, out: &out})
}

func (c *Client) RejectChange(ctx context.Context, key tokenvault.Credential, id, reason string) (*tokenvault.PendingChange, error) {
	var out tokenvault.PendingChange
	return &out, c.do(ctx, call{method: "POST", path: "/approvals/" + esc(id) + "/reject", key: key,
		body: map[string]string{"reason": reason}, out: &out})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// DetokenizeApproved is Detokenize of a body held to approval, with the
// id of its applied change (sent as SVC-APPROVAL-ID): once.
func (c *Client) DetokenizeApproved(ctx context.Context, key tokenvault.Credential, approvalID string, body any) (any, error) {
	if approvalID == "" {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "an approval id is required"}
	}
	var out any
	return out, c.do(ctx, call{method: "POST", path: "/detokenize", key: key, body: body, out: &out, approval: true, approvalID: approvalID})
}

// DeleteOwnTenant deletes the caller's tenant with all of its data
// (DELETE /tenants/self; tokenvault.Vault.DeleteOwnTenant). When the
// tenant's approval policy holds the deletion it returns a
// *tokenvault.ApprovalRequired and nothing is deleted.
func (c *Client) DeleteOwnTenant(ctx context.Context, key tokenvault.Credential) error {
	return c.do(ctx, call{method: "DELETE", path: "/tenants/self", key: key, approval: true})
}

// DeleteOwnTenantApproved is DeleteOwnTenant held to approval, with the id
// of its applied change (sent as SVC-APPROVAL-ID).
func (c *Client) DeleteOwnTenantApproved(ctx context.Context, key tokenvault.Credential, approvalID string) error {
	if approvalID == "" {
		return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "an approval id is required"}
	}
	return c.do(ctx, call{method: "DELETE", path: "/tenants/self", key: key, approval: true, approvalID: approvalID})
}
