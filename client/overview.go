package client

import (
	"context"

	"github.com/tokenvault/tokenvault"
)

// TenantStatistics is Vault.TenantStatistics over HTTP (GET
// /tenants/self/statistics): the tenant's figures, for a key with
// tenant:read.
func (c *Client) TenantStatistics(ctx context.Context, key tokenvault.Credential) (*tokenvault.TenantStatistics, error) {
	var out tokenvault.TenantStatistics
	return &out, c.do(ctx, call{method: "GET", path: "/tenants/self/statistics", key: key, out: &out})
}

// PreviewAccess is Vault.PreviewAccess over HTTP (POST
// /applications/preview-access): what an application's grants, or
// grants being written, allow on a sample token.
func (c *Client) PreviewAccess(ctx context.Context, key tokenvault.Credential, req tokenvault.AccessPreviewRequest) (*tokenvault.AccessPreview, error) {
	var out tokenvault.AccessPreview
	return &out, c.do(ctx, call{method: "POST", path: "/applications/preview-access", key: key, body: req, out: &out})
}
