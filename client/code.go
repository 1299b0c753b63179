package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault"
)

// Reactor formulas.

func (c *Client) CreateFormula(ctx context.Context, key tokenvault.Credential, req tokenvault.FormulaRequest) (*tokenvault.Formula, error) {
	var out tokenvault.Formula
	return &out, c.do(ctx, call{method: "POST", path: "/reactor-formulas", key: key, body: req, out: &out})
}

func (c *Client) ListFormulas(ctx context.Context, key tokenvault.Credential, req tokenvault.ListFormulasRequest) (*tokenvault.Page[tokenvault.Formula], error) {
	var out tokenvault.Page[tokenvault.Formula]
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/reactor-formulas", pageQuery(url.Values{}, req.PageRequest)), key: key, out: &out})
}

func (c *Client) GetFormula(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Formula, error) {
	var out tokenvault.Formula
	return &out, c.do(ctx, call{method: "GET", path: "/reactor-formulas/" + esc(id), key: key, out: &out})
}

func (c *Client) UpdateFormula(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.FormulaRequest) (*tokenvault.Formula, error) {
	var out tokenvault.Formula
	return &out, c.do(ctx, call{method: "PUT", path: "/reactor-formulas/" + esc(id), key: key, body: req, out: &out})
}

func (c *Client) DeleteFormula(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/reactor-formulas/" + esc(id), key: key})
}

// Reactors.

func (c *Client) CreateReactor(ctx context.Context, key tokenvault.Credential, req tokenvault.CreateReactorRequest) (*tokenvault.Reactor, error) {
	var out tokenvault.Reactor
	return &out, c.do(ctx, call{method: "POST", path: "/reactors", key: key, body: req, out: &out})
}

func (c *Client) ListReactors(ctx context.Context, key tokenvault.Credential, req tokenvault.ListReactorsRequest) (*tokenvault.Page[tokenvault.Reactor], error) {
	var out tokenvault.Page[tokenvault.Reactor]
	q := pageQuery(url.Values{"id": req.IDs}, req.PageRequest)
	if req.Name != "" {
		q.Set("name", req.Name)
	}
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/reactors", clean(q)), key: key, out: &out})
}

func (c *Client) GetReactor(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Reactor, error) {
	var out tokenvault.Reactor
	return &out, c.do(ctx, call{method: "GET", path: "/reactors/" + esc(id), key: key, out: &out})
}

func (c *Client) UpdateReactor(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.UpdateReactorRequest) (*tokenvault.Reactor, error) {
	var out tokenvault.Reactor
	return &out, c.do(ctx, call{method: "PUT", path: "/reactors/" + esc(id), key: key, body: req, out: &out})
}

func (c *Client) PatchReactor(ctx context.Context, key tokenvault.Credential, id string, patch json.RawMessage) error {
	return c.do(ctx, call{method: "PATCH", path: "/reactors/" + esc(id), key: key, body: patch, contentType: mergePatchType})
}

func (c *Client) DeleteReactor(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/reactors/" + esc(id), key: key})
}

func (c *Client) InvokeReactor(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.InvokeReactorRequest) (*tokenvault.ReactorResponse, error) {
	var out tokenvault.ReactorResponse
	return &out, c.do(ctx, call{method: "POST", path: "/reactors/" + esc(id) + "/react", key: key, body: req, out: &out, fromCode: true})
}

// Proxies.

func (c *Client) CreateProxy(ctx context.Context, key tokenvault.Credential, req tokenvault.ProxyRequest) (*tokenvault.Proxy, error) {
	var out tokenvault.Proxy
	return &out, c.do(ctx, call{method: "POST", path: "/proxies", key: key, body: req, out: &out})
}

func (c *Client) ListProxies(ctx context.Context, key tokenvault.Credential, req tokenvault.ListProxiesRequest) (*tokenvault.Page[tokenvault.Proxy], error) {
	var out tokenvault.Page[tokenvault.Proxy]
	q := pageQuery(url.Values{"id": req.IDs}, req.PageRequest)
	if req.Name != "" {
		q.Set("name", req.Name)
	}
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/proxies", clean(q)), key: key, out: &out})
}

func (c *Client) GetProxy(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.Proxy, error) {
	var out tokenvault.Proxy
	return &out, c.do(ctx, call{method: "GET", path: "/proxies/" + esc(id), key: key, out: &out})
}

func (c *Client) UpdateProxy(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.ProxyRequest) (*tokenvault.Proxy, error) {
	var out tokenvault.Proxy
	return &out, c.do(ctx, call{method: "PUT", path: "/proxies/" + esc(id), key: key, body: req, out: &out})
}

func (c *Client) PatchProxy(ctx context.Context, key tokenvault.Credential, id string, patch json.RawMessage) error {
	return c.do(ctx, call{method: "PATCH", path: "/proxies/" + esc(id), key: key, body: patch, contentType: mergePatchType})
}

func (c *Client) DeleteProxy(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/proxies/" + esc(id), key: key})
}

// InvokeProxy sends call through the proxy and returns the destination's
// answer as it came. A failure of the proxy itself is an error.
func (c *Client) InvokeProxy(ctx context.Context, pc tokenvault.ProxyCall) (*tokenvault.ProxyResponse, error) {
	// What the server has no route for is refused here as in process: the
	// server's 405 would come back as if the destination had answered.
	if pc.Method == "" {
		pc.Method = http.MethodGet
	}
	if methods := tokenvault.ProxyMethods(); !slices.Contains(methods, pc.Method) {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the request is invalid",
			Fields: map[string][]string{"method": {"must be one of " + strings.Join(methods, ", ")}}}
	}
	if pc.Path != "" && !strings.HasPrefix(pc.Path, "/") {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the request is invalid",
			Fields: map[string][]string{"path": {"must be empty or start with /"}}}
	}
	u := c.base + "/proxy" + pc.EscapedPath()
	if pc.RawQuery != "" {
		u += "?" + pc.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, pc.Method, u, bytes.NewReader(pc.Body))
	if err != nil {
		return nil, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "bad request: " + err.Error()}
	}
	req.Header = pc.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	// The keys are the call's fields, as in process, where keys in Header
	// are neither read nor forwarded.
	req.Header.Set("SVC-PROXY-KEY", pc.ProxyKey)
	req.Header.Del(apiKeyHeader)
	if pc.APIKey != "" {
		req.Header.Set(apiKeyHeader, string(pc.APIKey))
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, c.failed(ctx, "cannot be reached", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, c.failed(ctx, "stopped answering", err)
	}
	var pe struct {
		ProxyError *struct {
			Type   string              `json:"type"`
			Status int                 `json:"status"`
			Detail string              `json:"detail"`
			Errors map[string][]string `json:"errors"`
		} `json:"proxy_error"`
	}
	if res.StatusCode >= 400 && json.Unmarshal(b, &pe) == nil && pe.ProxyError != nil {
		kind, ok := kindOf[pe.ProxyError.Status]
		if !ok || pe.ProxyError.Type == tokenvault.CodeFailedProblemType {
			kind = tokenvault.CodeFailed
		}
		return nil, &tokenvault.Error{Kind: kind, Message: pe.ProxyError.Detail, Fields: pe.ProxyError.Errors, Status: pe.ProxyError.Status}
	}
	return &tokenvault.ProxyResponse{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}
