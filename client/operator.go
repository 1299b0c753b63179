package client

import (
	"context"
	"io"
	"net/url"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
)

// Operator routes (httpapi.Options.OperatorKey). These methods take the
// server's operator key where the Vault methods of the same names take
// none: in-process they are the host's own operations.

// operatorTenantBody is what POST /operator/tenants takes: the owner's id
// is assigned by the server, so none is sent.
type operatorTenantBody struct {
	Name  string `json:"name"`
	Owner struct {
		Email     string `json:"email,omitempty"`
		FirstName string `json:"first_name,omitempty"`
		LastName  string `json:"last_name,omitempty"`
		Picture   string `json:"picture,omitempty"`
	} `json:"owner"`
	ApplicationName string `json:"application_name,omitempty"`
}

// CreateTenant creates a tenant with its owner and first management
// application, whose Key the answer holds (shown this once). req.Owner.ID
// is ignored: the server assigns it.
func (c *Client) CreateTenant(ctx context.Context, operatorKey tokenvault.Credential, req tokenvault.CreateTenantRequest) (*tokenvault.TenantBootstrap, error) {
	body := operatorTenantBody{Name: req.Name, ApplicationName: req.ApplicationName}
	body.Owner.Email, body.Owner.FirstName, body.Owner.LastName, body.Owner.Picture = req.Owner.Email, req.Owner.FirstName, req.Owner.LastName, req.Owner.Picture
	var out tokenvault.TenantBootstrap
	return &out, c.do(ctx, call{method: "POST", path: "/operator/tenants", key: operatorKey, body: body, out: &out})
}

func (c *Client) ListTenants(ctx context.Context, operatorKey tokenvault.Credential, req tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Tenant], error) {
	var out tokenvault.Page[tokenvault.Tenant]
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/operator/tenants", pageQuery(url.Values{}, req)), key: operatorKey, out: &out})
}

func (c *Client) GetTenantByID(ctx context.Context, operatorKey tokenvault.Credential, id string) (*tokenvault.Tenant, error) {
	var out tokenvault.Tenant
	return &out, c.do(ctx, call{method: "GET", path: "/operator/tenants/" + esc(id), key: operatorKey, out: &out})
}

// VerifyAuditChain has the server verify tenant tenantID's audit chain as
// its store holds it (POST /operator/tenants/{id}/audit/verify), and
// returns the report: a chain with problems is a report whose OK is
// false, not an error. Errors are the Vault method's (NotFound for an
// unknown tenant) and Unauthenticated for a wrong operator key.
func (c *Client) VerifyAuditChain(ctx context.Context, operatorKey tokenvault.Credential, tenantID string) (*auditchain.Report, error) {
	var out auditchain.Report
	return &out, c.do(ctx, call{method: "POST", path: "/operator/tenants/" + esc(tenantID) + "/audit/verify", key: operatorKey, out: &out})
}

func (c *Client) DeleteTenant(ctx context.Context, operatorKey tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/operator/tenants/" + esc(id), key: operatorKey})
}

// Backup streams a snapshot of the server's store to w. An error after the
// transfer began (the server aborts the connection when the snapshot
// fails; a network failure) leaves a partial copy in w: write to a
// temporary file and keep it only when Backup returns nil.
func (c *Client) Backup(ctx context.Context, operatorKey tokenvault.Credential, w io.Writer) error {
	return c.streamBackup(ctx, operatorKey, "/operator/backup", w)
}
