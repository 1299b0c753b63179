package client

import (
	"context"
	"net/url"

	"github.com/tokenvault/tokenvault"
)

// Sessions.

func (c *Client) CreateSession(ctx context.Context, key tokenvault.Credential) (*tokenvault.Session, error) {
	var out tokenvault.Session
	return &out, c.do(ctx, call{method: "POST", path: "/sessions", key: key, out: &out})
}

func (c *Client) AuthorizeSession(ctx context.Context, key tokenvault.Credential, req tokenvault.AuthorizeSessionRequest) error {
	return c.do(ctx, call{method: "POST", path: "/sessions/authorize", key: key, body: req})
}

// Members and invitations.

func (c *Client) ListMembers(ctx context.Context, key tokenvault.Credential, req tokenvault.ListMembersRequest) (*tokenvault.Page[tokenvault.TenantMember], error) {
	var out tokenvault.Page[tokenvault.TenantMember]
	q := pageQuery(url.Values{"user_id": req.UserIDs}, req.PageRequest)
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/tenants/self/members", clean(q)), key: key, out: &out})
}

func (c *Client) DeleteMember(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/tenants/self/members/" + esc(id), key: key})
}

func (c *Client) CreateInvitation(ctx context.Context, key tokenvault.Credential, req tokenvault.CreateInvitationRequest) (*tokenvault.Invitation, error) {
	var out tokenvault.Invitation
	return &out, c.do(ctx, call{method: "POST", path: "/tenants/self/invitations", key: key, body: req, out: &out})
}

func (c *Client) ListInvitations(ctx context.Context, key tokenvault.Credential, req tokenvault.ListInvitationsRequest) (*tokenvault.Page[tokenvault.Invitation], error) {
	var out tokenvault.Page[tokenvault.Invitation]
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/tenants/self/invitations", pageQuery(url.Values{}, req.PageRequest)), key: key, out: &out})
}

func (c *Client) GetInvitation(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Invitation, error) {
	var out tokenvault.Invitation
	return &out, c.do(ctx, call{method: "GET", path: "/tenants/self/invitations/" + esc(id), key: key, out: &out})
}

func (c *Client) ResendInvitation(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Invitation, error) {
	var out tokenvault.Invitation
	return &out, c.do(ctx, call{method: "POST", path: "/tenants/self/invitations/" + esc(id) + "/resend", key: key, out: &out})
}

func (c *Client) DeleteInvitation(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/tenants/self/invitations/" + esc(id), key: key})
}

// AcceptInvitation needs no key: token is the link's credential.
func (c *Client) AcceptInvitation(ctx context.Context, token string, user tokenvault.User) (*tokenvault.TenantMember, error) {
	var out tokenvault.TenantMember
	body := map[string]any{"token": token, "user": user}
	return &out, c.do(ctx, call{method: "POST", path: "/tenants/invitations/accept", body: body, out: &out})
}
