package client

import (
	"context"
	"net/url"

	"github.com/tokenvault/tokenvault"
)

// TokenAccess is GET /tokens/{id}/access: who accessed the token's data,
// newest first, the first page (see tokenvault.Vault.TokenAccess).
func (c *Client) TokenAccess(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Page[tokenvault.TokenAccess], error) {
	return c.TokenAccessPage(ctx, key, id, tokenvault.PageRequest{})
}

// TokenAccessPage is TokenAccess for the page pr: by cursor (pr.Start,
// the previous page's Pagination.After) and size.
func (c *Client) TokenAccessPage(ctx context.Context, key tokenvault.Credential, id string, pr tokenvault.PageRequest) (*tokenvault.Page[tokenvault.TokenAccess], error) {
	var out tokenvault.Page[tokenvault.TokenAccess]
	q := pageQuery(url.Values{}, pr)
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/tokens/"+esc(id)+"/access", q), key: key, out: &out})
}

// SubjectAccess is POST /tokens/access/search: who accessed the data of
// the tokens with req.Metadata (see tokenvault.Vault.SubjectAccess).
func (c *Client) SubjectAccess(ctx context.Context, key tokenvault.Credential, req tokenvault.SubjectAccessRequest) (*tokenvault.SubjectAccessPage, error) {
	var out tokenvault.SubjectAccessPage
	body := map[string]any{"metadata": req.Metadata}
	if req.Page != 0 {
		body["page"] = req.Page
	}
	if req.Size != 0 {
		body["size"] = req.Size
	}
	if req.Start != "" {
		body["start"] = req.Start
	}
	return &out, c.do(ctx, call{method: "POST", path: "/tokens/access/search", key: key, body: body, out: &out})
}
