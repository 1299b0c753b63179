package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tokenvault/tokenvault"
)

// ProxyKeyHeader and ProxyKeyParam name the proxy to invoke.
const (
	ProxyKeyHeader = "SVC-PROXY-KEY"
	ProxyKeyParam  = "svc-proxy-key"
)

func (a *api) proxyRoutes() {
	a.handle("POST /proxies", a.createProxy)
	a.handle("GET /proxies", a.listProxies, list("id", "name")...)
	a.handle("GET /proxies/{id}", a.getProxy)
	a.handle("PUT /proxies/{id}", a.updateProxy)
	a.handle("PATCH /proxies/{id}", a.patchProxy)
	a.handle("DELETE /proxies/{id}", a.deleteProxy)
	for _, method := range tokenvault.ProxyMethods() {
		// The query is the destination's (svc-proxy-key aside).
		a.handle(method+" /proxy", a.invokeProxy, anyQuery)
		a.handle(method+" /proxy/{rest...}", a.invokeProxy, anyQuery)
	}
}

func (a *api) createProxy(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.ProxyRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateProxy(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listProxies(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	out, err := a.v.ListProxies(r.Context(), apiKey(r), tokenvault.ListProxiesRequest{IDs: q["id"], Name: q.Get("name"), PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getProxy(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetProxy(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateProxy(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.ProxyRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateProxy(r.Context(), apiKey(r), r.PathValue("id"), req)
	a.reply(w, r, out, err)
}

func (a *api) patchProxy(w http.ResponseWriter, r *http.Request) {
	patch, err := a.decodeMergePatch(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.noContent(w, r, a.v.PatchProxy(r.Context(), apiKey(r), r.PathValue("id"), patch))
}

func (a *api) deleteProxy(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteProxy(r.Context(), apiKey(r), r.PathValue("id")))
}

// invokeProxy forwards the request and writes the destination's answer as
// it came, or {"proxy_error": problem} when the proxy itself fails.
func (a *api) invokeProxy(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody))
	if err != nil {
		a.writeProxyError(w, r, decodeError(err))
		return
	}
	key, err := proxyKey(r)
	if err == nil {
		err = twiceAPIKey(r)
	}
	if err != nil {
		a.writeProxyError(w, r, err)
		return
	}
	path := ""
	if rest := r.PathValue("rest"); rest != "" || strings.HasSuffix(r.URL.Path, "/proxy/") {
		path = "/" + rest
	}
	res, err := a.v.InvokeProxy(r.Context(), tokenvault.ProxyCall{
		ProxyKey: key, APIKey: apiKey(r), Method: r.Method, Path: path, RawPath: rawSuffix(r),
		RawQuery: withoutProxyKey(r.URL.RawQuery), Header: r.Header, Body: body,
	})
	if err != nil {
		a.writeProxyError(w, r, err)
		return
	}
	for k, vs := range res.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(res.Status)
	w.Write(res.Body)
}

// withoutProxyKey returns the raw query without its svc-proxy-key
// parameters, everything else as the caller sent it (order and encoding
// kept: a destination may sign its query).
func withoutProxyKey(raw string) string {
	if raw == "" {
		return ""
	}
	var kept []string
	for _, part := range strings.Split(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil && n == ProxyKeyParam {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// writeProxyError answers a failure of the proxy itself.
func (a *api) writeProxyError(w http.ResponseWriter, r *http.Request, err error) {
	var e *tokenvault.Error
	if !errors.As(err, &e) {
		e = &tokenvault.Error{Kind: tokenvault.Internal, Err: err}
	}
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Kind == tokenvault.CodeFailed && e.Status >= 400 && e.Status <= 599 {
		status = e.Status
	}
	p := Problem{Type: "about:blank", Title: "Invalid proxy request", Status: status, Detail: e.Message, Errors: e.Fields}
	if e.Kind == tokenvault.CodeFailed {
		p.Type = tokenvault.CodeFailedProblemType
	}
	if e.Kind == tokenvault.Unauthenticated {
		// The Authorization header is the destination's: not a hint here.
		p.Detail = e.Message + "; send the proxy key in the " + ProxyKeyHeader + " header or the " + ProxyKeyParam +
			" query parameter and, when the proxy requires it, an API key in the " + APIKeyHeader + " header"
	}
	if e.Kind == tokenvault.Internal {
		a.logger.Error("httpapi: proxy internal error", "err", e.Err)
		p.Detail, p.Errors = "internal error", nil
	}
	if p.Errors == nil {
		p.Errors = map[string][]string{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]Problem{"proxy_error": p})
}

// rawSuffix is the escaped path after /proxy as the caller sent it: the
// escaped path without its first segment, which the mux matched as
// "proxy" (it may be spelled %70roxy). The Vault uses it only where it
// decodes to the path it was given.
func rawSuffix(r *http.Request) string {
	escaped := r.URL.EscapedPath()
	if i := strings.IndexByte(escaped[min(1, len(escaped)):], '/'); i >= 0 {
		return escaped[1+i:]
	}
	return ""
}
