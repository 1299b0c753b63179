package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Applications.

func (c *Client) CreateApplication(ctx context.Context, key tokenvault.Credential, req tokenvault.CreateApplicationRequest) (*tokenvault.Application, error) {
	req.ExpiresAt = inUTC(req.ExpiresAt)
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "POST", path: "/applications", key: key, body: req, out: &out, approval: true})
}

func (c *Client) ListApplications(ctx context.Context, key tokenvault.Credential, req tokenvault.ListApplicationsRequest) (*tokenvault.Page[tokenvault.Application], error) {
	var out tokenvault.Page[tokenvault.Application]
	q := pageQuery(url.Values{"id": req.IDs}, req.PageRequest)
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/applications", clean(q)), key: key, out: &out})
}

func (c *Client) GetApplication(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Application, error) {
	if id == "key" { // GET /applications/key is GetApplicationByKey
		return nil, &tokenvault.Error{Kind: tokenvault.NotFound, Message: "application not found"}
	}
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "GET", path: "/applications/" + esc(id), key: key, out: &out})
}

func (c *Client) GetApplicationByKey(ctx context.Context, key tokenvault.Credential) (*tokenvault.Application, error) {
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "GET", path: "/applications/key", key: key, out: &out})
}

func (c *Client) UpdateApplication(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.UpdateApplicationRequest) (*tokenvault.Application, error) {
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "PUT", path: "/applications/" + esc(id), key: key, body: req, out: &out, approval: true})
}

func (c *Client) RegenerateApplicationKey(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Application, error) {
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "POST", path: "/applications/" + esc(id) + "/regenerate", key: key, out: &out, approval: true})
}

// UnfreezeApplication releases an application frozen by the circuit
// breaker on reveals (Vault.UnfreezeApplication).
func (c *Client) UnfreezeApplication(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Application, error) {
	var out tokenvault.Application
	return &out, c.do(ctx, call{method: "POST", path: "/applications/" + esc(id) + "/unfreeze", key: key, out: &out})
}

// CreateDecoy plants a decoy token (Vault.CreateDecoy).
func (c *Client) CreateDecoy(ctx context.Context, key tokenvault.Credential, req tokenvault.CreateDecoyRequest) (*tokenvault.Decoy, error) {
	var out tokenvault.Decoy
	return &out, c.do(ctx, call{method: "POST", path: "/decoys", key: key, body: req, out: &out})
}

// ListDecoys lists the tenant's decoys (Vault.ListDecoys).
func (c *Client) ListDecoys(ctx context.Context, key tokenvault.Credential) ([]tokenvault.Decoy, error) {
	var out struct {
		Data []tokenvault.Decoy `json:"data"`
	}
	return out.Data, c.do(ctx, call{method: "GET", path: "/decoys", key: key, out: &out})
}

func (c *Client) DeleteApplication(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/applications/" + esc(id), key: key})
}

// Permissions, logs, tenant.

func (c *Client) ListPermissions(ctx context.Context, key tokenvault.Credential, typ tokenvault.ApplicationType) ([]tokenvault.Permission, error) {
	var out []tokenvault.Permission
	q := url.Values{}
	if typ != "" {
		q.Set("application_type", string(typ))
	}
	return out, c.do(ctx, call{method: "GET", path: withQuery("/permissions", q), key: key, out: &out})
}

func (c *Client) ListLogs(ctx context.Context, key tokenvault.Credential, req tokenvault.ListLogsRequest) (*tokenvault.Page[tokenvault.Log], error) {
	var out tokenvault.Page[tokenvault.Log]
	q := pageQuery(url.Values{}, req.PageRequest)
	if req.EntityType != "" {
		q.Set("entity_type", req.EntityType)
	}
	if req.EntityID != "" {
		q.Set("entity_id", req.EntityID)
	}
	for name, v := range map[string]string{"actor_id": req.ActorID, "operation": req.Operation, "outcome": req.Outcome} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if req.StartDate != nil {
		q.Set("start_date", req.StartDate.UTC().Format(time.RFC3339Nano)) // RFC 3339 has no offset seconds
	}
	if req.EndDate != nil {
		q.Set("end_date", req.EndDate.UTC().Format(time.RFC3339Nano))
	}
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/logs", q), key: key, out: &out})
}

func (c *Client) EntityTypes(ctx context.Context, key tokenvault.Credential) ([]tokenvault.EntityType, error) {
	var out []tokenvault.EntityType
	return out, c.do(ctx, call{method: "GET", path: "/logs/entity-types", key: key, out: &out})
}

func (c *Client) GetTenant(ctx context.Context, key tokenvault.Credential) (*tokenvault.Tenant, error) {
	var out tokenvault.Tenant
	return &out, c.do(ctx, call{method: "GET", path: "/tenants/self", key: key, out: &out})
}

// SetPurposes replaces the tenant's list of purposes of access
// (tokenvault.Vault.SetPurposes). A call names one with tokenvault.WithPurpose
// on its context: the client sends it in the SVC-PURPOSE header.
func (c *Client) SetPurposes(ctx context.Context, key tokenvault.Credential, req tokenvault.SetPurposesRequest) (*tokenvault.Tenant, error) {
	var out tokenvault.Tenant
	return &out, c.do(ctx, call{method: "PUT", path: "/tenants/self/purposes", key: key, body: req, out: &out})
}

func (c *Client) RotateDataKey(ctx context.Context, key tokenvault.Credential) error {
	return c.do(ctx, call{method: "POST", path: "/tenants/self/rotate-data-key", key: key})
}

func (c *Client) WebhookSecret(ctx context.Context, key tokenvault.Credential) (string, error) {
	var out struct{ Secret string }
	err := c.do(ctx, call{method: "GET", path: "/tenants/self/webhook-secret", key: key, out: &out})
	return out.Secret, err
}

// Tokens.

func (c *Client) Tokenize(ctx context.Context, key tokenvault.Credential, body any) (any, error) {
	var out any
	return out, c.do(ctx, call{method: "POST", path: "/tokenize", key: key, body: body, out: &out})
}

func (c *Client) Detokenize(ctx context.Context, key tokenvault.Credential, body any) (any, error) {
	var out any
	return out, c.do(ctx, call{method: "POST", path: "/detokenize", key: key, body: body, out: &out, approval: true})
}

func (c *Client) CreateToken(ctx context.Context, key tokenvault.Credential, req tokenvault.TokenRequest) (*tokenvault.Token, error) {
	req.ExpiresAt = inUTC(req.ExpiresAt)
	var body any = req
	if req.TokenIntentID != "" && req.Data == nil {
		// A conversion sends no data (not null): the intent's is used.
		body = conversionRequest{TokenRequest: req}
	}
	var out tokenvault.Token
	return &out, c.do(ctx, call{method: "POST", path: "/tokens", key: key, body: body, out: &out})
}

// conversionRequest is a token request converting a token intent, as
// sent: its Data field hides the request's, so that no "data" is sent.
type conversionRequest struct {
	tokenvault.TokenRequest
	Data any `json:"data,omitempty"`
}

func (c *Client) GetToken(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Token, error) {
	var out tokenvault.Token
	return &out, c.do(ctx, call{method: "GET", path: "/tokens/" + esc(id), key: key, out: &out})
}

// UpdateToken sends patch as an RFC 7386 merge patch.
func (c *Client) UpdateToken(ctx context.Context, key tokenvault.Credential, id string, patch json.RawMessage) (*tokenvault.Token, error) {
	var out tokenvault.Token
	return &out, c.do(ctx, call{method: "PATCH", path: "/tokens/" + esc(id), key: key, body: patch, contentType: mergePatchType, out: &out})
}

func (c *Client) DeleteToken(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/tokens/" + esc(id), key: key})
}

func (c *Client) ListTokens(ctx context.Context, key tokenvault.Credential, req tokenvault.ListTokensRequest) (*tokenvault.Page[tokenvault.Token], error) {
	var out tokenvault.Page[tokenvault.Token]
	q := pageQuery(url.Values{"id": req.IDs}, req.PageRequest)
	for name, v := range map[string]string{"container": req.Container, "type": req.Type, "fingerprint": req.Fingerprint} {
		if v != "" {
			q.Set(name, v)
		}
	}
	for k, v := range req.Metadata {
		q.Set("metadata."+k, v)
	}
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/tokens", clean(q)), key: key, out: &out})
}

func (c *Client) SearchTokens(ctx context.Context, key tokenvault.Credential, req tokenvault.SearchTokensRequest) (*tokenvault.Page[tokenvault.Token], error) {
	var out tokenvault.Page[tokenvault.Token]
	body := map[string]any{"query": req.Query, "page": req.Page, "size": req.Size}
	if req.Start != "" {
		body["start"] = req.Start
	}
	return &out, c.do(ctx, call{method: "POST", path: "/tokens/search", key: key, body: body, out: &out})
}

// clean drops empty repeated parameters (a nil id list).
func clean(q url.Values) url.Values {
	for k, v := range q {
		if len(v) == 0 {
			delete(q, k)
		}
	}
	return q
}

// Root is the answer of GET / (no key needed): where the server's OpenAPI
// document is.
type Root struct {
	Name string `json:"name"`
	// OpenAPI is the path of the document, under the prefix the API is
	// mounted at (such as /vault/openapi.json).
	OpenAPI string `json:"openapi"`
	Detail  string `json:"detail"`
}

// Root asks the API's root where its OpenAPI document is.
func (c *Client) Root(ctx context.Context) (*Root, error) {
	var out Root
	return &out, c.do(ctx, call{method: "GET", path: "/", out: &out})
}

// OpenAPI returns the OpenAPI 3.1 document the server serves (no key
// needed), as JSON.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	return out, c.do(ctx, call{method: "GET", path: "/openapi.json", out: &out})
}

// inUTC is t in UTC, so that it is sent as the instant it is: RFC 3339
// writes a zone's offset to the minute, and a zone such as a local mean
// time's (+00:19:32) would move it.
func inUTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
