package tokenvault

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// proxyMethods are the methods a proxy forwards (see ProxyMethods).
var proxyMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// ProxyMethods returns the methods a proxy forwards, as RFC 9110 spells
// them (case matters): InvokeProxy refuses any other as Invalid, naming
// "method", and httpapi serves /proxy for these alone.
func ProxyMethods() []string { return slices.Clone(proxyMethods) }

// ProxyCall is one request to a proxy, as the HTTP layer received it.
type ProxyCall struct {
	// ProxyKey names the proxy (SVC-PROXY-KEY or svc-proxy-key).
	ProxyKey string
	// APIKey is the caller's SVC-API-KEY; required unless the proxy has
	// require_auth false.
	APIKey Credential
	// Method is one of ProxyMethods; "" means GET.
	Method string
	// Path is the suffix after /proxy, decoded: "" or starting with "/".
	Path string
	// RawPath is Path as the caller escaped it (as url.URL's RawPath),
	// optional. When it is an escaping of Path, its segments are the ones
	// forwarded, so that an encoded "/" (%2F) stays inside its segment
	// instead of splitting it. Either way "." and ".." segments of Path,
	// where an encoded "/" separates, are refused.
	RawPath string
	// RawQuery is the query string without svc-proxy-key and without "?".
	RawQuery string
	Header   http.Header
	Body     []byte
}

// EscapedPath is Path as it goes on the wire, as url.URL's EscapedPath:
// RawPath when that is an escaping of Path, and otherwise Path with each
// segment escaped. Path must be "" or start with "/".
func (c ProxyCall) EscapedPath() string { return outbound.EscapePath(c.Path, c.RawPath) }

// ProxyResponse is the destination's answer, after the response transform.
type ProxyResponse = reactors.ProxyResponse

// proxyPlan is what the transaction decides for a call.
type proxyPlan struct {
	proxy    *Proxy
	tenantID string
	client   *credential
	body     any // parsed (and detokenized) body, for JSON and forms
}

// InvokeProxy forwards call to the destination of the proxy its key names.
// With require_auth (the default) the caller's API key must hold
// token:use, even when nothing is detokenized; without it anonymous calls
// are served and detokenization uses the proxy's application (a call with
// expressions and no application is PermissionDenied).
//
// {{ <token_id> }} expressions in JSON and form bodies are detokenized with
// token:use on each token's containers; the request transform, when set,
// then rewrites body and headers. The destination's answer comes back as
// it is, through the response transform for a 2xx or 3xx JSON or form
// body. A failure of the proxy itself is an *Error (BadGateway when the
// destination cannot be reached or answers too much; TooLarge when a
// transform's result, or the body it built, is over
// Options.Code.MaxResultBytes); httpapi wraps it in {"proxy_error": ...}.
func (v *Vault) InvokeProxy(ctx context.Context, call ProxyCall) (*ProxyResponse, error) {
	if call.Method == "" {
		call.Method = http.MethodGet
	}
	if !slices.Contains(proxyMethods, call.Method) {
		return nil, unit.InvalidField("method", "must be one of %s", strings.Join(proxyMethods, ", "))
	}
	if err := reactors.CheckHeaders(call.Header); err != nil {
		return nil, err
	}
	if err := outbound.CheckProxyPath(call.Path); err != nil {
		return nil, err
	}
	kind := reactors.KindOfBody(call.Header)
	var parsed any
	switch kind {
	case reactors.BodyJSON:
		if len(bytes.TrimSpace(call.Body)) > 0 {
			doc, err := decodeJSON(call.Body)
			if refused(err) {
				return nil, err
			}
			if err != nil {
				return nil, unit.InvalidField("body", "is not valid JSON")
			}
			parsed = doc
		}
	case reactors.BodyForm:
		vals, err := url.ParseQuery(string(call.Body))
		if err != nil {
			return nil, unit.InvalidField("body", "is not a valid form")
		}
		parsed = reactors.FormObject(vals)
	}
	plan, err := v.planProxyCall(ctx, call, parsed)
	if err != nil {
		return nil, err
	}
	header := reactors.ForwardHeaders(call.Header)
	body := call.Body
	if kind != reactors.BodyOther {
		body = reactors.EncodeBody(kind, plan.body)
		if body == nil && kind == reactors.BodyJSON && len(bytes.TrimSpace(call.Body)) > 0 {
			body = []byte("null") // a JSON null, sent or detokenized, is a body
		}
		if plan.proxy.RequestTransform != nil {
			query := ""
			if call.RawQuery != "" {
				query = "?" + call.RawQuery
			}
			args := map[string]any{"body": plan.body, "headers": reactors.HeaderObject(header), "method": call.Method, "path": call.Path, "query": query}
			body, header, err = v.transform(ctx, plan, plan.proxy.RequestTransform.Code, args, kind, header)
			if err != nil {
				return nil, err
			}
		}
	}
	if h := call.Header.Get("SVC-PROXY-KEEP-ALIVE"); h != "" {
		header.Set("Keep-Alive", h)
	}
	if h := call.Header.Get("SVC-PROXY-CONNECTION"); h != "" {
		header.Set("Connection", h)
	}
	res, err := v.forward(ctx, plan.proxy, call, header, body)
	if err != nil {
		return nil, err
	}
	rkind := reactors.KindOfBody(res.Header)
	if plan.proxy.ResponseTransform == nil || rkind == reactors.BodyOther || res.Status >= 400 {
		return res, nil
	}
	var rbody any
	switch rkind {
	case reactors.BodyJSON:
		if rbody, err = decodeJSONLastWins(res.Body); err != nil {
			return res, nil // not what it says it is: pass it through as sent
		}
	case reactors.BodyForm:
		vals, err := url.ParseQuery(string(res.Body))
		if err != nil {
			return res, nil
		}
		rbody = reactors.FormObject(vals)
	}
	res.Header.Del("Content-Length")
	res.Body, res.Header, err = v.transform(ctx, plan, plan.proxy.ResponseTransform.Code,
		map[string]any{"body": rbody, "headers": reactors.HeaderObject(res.Header)}, rkind, res.Header)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// planProxyCall finds the proxy, authorizes the caller, detokenizes the
// body and logs the call, in one transaction.
func (v *Vault) planProxyCall(ctx context.Context, call ProxyCall, parsed any) (*proxyPlan, error) {
	var plan *proxyPlan
	err := v.update(ctx, func(t *txn) error {
		rec, err := t.proxyByKey(call.ProxyKey)
		if err != nil {
			return err
		}
		if rec == nil {
			// A proxy key is a credential too: wrong ones count against
			// the caller's address like wrong API keys, and only they
			// are throttled (ratelimit.go).
			return t.authFailed(unit.Errorf(Unauthenticated, "missing or unknown proxy key"))
		}
		plan = &proxyPlan{proxy: reactors.ProxyOf(rec), tenantID: rec.TenantID, body: parsed}
		if rec.Application != nil {
			c := appCredential(rec.TenantID, rec.Application.ID)
			plan.client = &c
		}
		var p *principal
		by := actor{Type: ActorSystem}
		switch {
		case rec.RequireAuth:
			if p, err = t.authorize(call.APIKey, PermTokenUse); err != nil {
				return err
			}
			if p.TenantID != rec.TenantID {
				return unit.ErrUnauthenticatedKey
			}
			by = p.Actor()
		case plan.client != nil:
			if p, err = t.authenticateAs(*plan.client); err != nil {
				return unit.Errorf(PermissionDenied, "the proxy's application no longer exists")
			}
		}
		if parsed != nil {
			if p == nil {
				p = &principal{TenantID: rec.TenantID} // no grants: any expression is refused
			}
			if plan.body, err = t.detokenize(p, PermTokenUse, parsed, "Token used by proxy", ChannelProxy); err != nil {
				return prefixFields(err, "body")
			}
		}
		if err := reactors.EmitProxy(t.Tx, EventProxyInvoked, by, plan.proxy); err != nil {
			return err
		}
		return t.Log(by, rec.TenantID, EntityProxy, rec.ID, OpInvoke, "Proxy invoked")
	})
	return plan, err
}

// transform runs transform code and returns the body (encoded as kind) and
// headers it returned; absent ones keep the input's. A result, or a body
// the code built, over Options.Code.MaxResultBytes is TooLarge.
func (v *Vault) transform(ctx context.Context, plan *proxyPlan, code string, args map[string]any, kind reactors.BodyKind, header http.Header) ([]byte, http.Header, error) {
	conf := plan.proxy.Configuration
	if conf == nil {
		conf = map[string]any{}
	}
	out, err := v.runCode(ctx, codeRun{
		kind: CodeTransform, tenant: plan.tenantID, code: code, req: map[string]any{"args": args, "configuration": conf}, client: plan.client,
		log: []slog.Attr{slog.String("proxy", plan.proxy.ID)},
	})
	if err != nil {
		return nil, nil, err
	}
	return v.sandboxCode().TransformResult(out, args["body"], kind, header)
}

// forward makes the outbound call and reads the answer, bounded.
func (v *Vault) forward(ctx context.Context, p *Proxy, call ProxyCall, header http.Header, body []byte) (*ProxyResponse, error) {
	target, err := outbound.ProxyTarget(p.DestinationURL, call.EscapedPath(), call.RawQuery)
	if err != nil {
		return nil, err
	}
	return reactors.Forward(ctx, v.httpClient, v.proxyMaxResponse, call.Method, target.String(), header, body)
}
