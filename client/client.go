// Package client is a typed Go client for the Token Vault REST API served
// by package httpapi. Its methods have the names, arguments and result
// types of the tokenvault.Vault methods, so a program can switch between
// in-process and remote use without changing its types:
//
//	c := client.New("https://vault.example.com/vault", nil)
//	out, err := c.Tokenize(ctx, apiKey, map[string]any{"ssn": "078-05-1120"})
//
// A call's purpose of access travels as in process: put it in the call's
// context with tokenvault.WithPurpose, and the client sends it as the
// SVC-PURPOSE header.
//
// Errors are *tokenvault.Error with the Kind the HTTP status maps to and the
// problem's detail and field errors, so errors.Is(err, tokenvault.ErrNotFound)
// works as it does in-process. An error of tenant code is CodeFailed with
// its Status, as in process: the server marks it with the problem type
// tokenvault.CodeFailedProblemType, and a reactor's CustomHttpResponseError
// comes back with its body in Body (decoded when it is JSON). A call that
// gets no answer is Unavailable: naming the server's URL and the cause
// (connection refused, timeout, TLS) when it cannot be reached, or saying
// that the context's deadline passed (or it was cancelled), wrapping
// ctx.Err() so that errors.Is(err, context.DeadlineExceeded) holds. New
// without an http.Client gives one with timeouts (DefaultTimeout and the
// transport's), never http.DefaultClient.
//
// Each method does what the Vault method of the same name does (see its
// documentation in package tokenvault); only the transport differs. Where
// HTTP cannot carry a call as it is, the client makes it mean what it
// means in process: an id that is empty, "." or ".." (which a server
// would clean out of the path) or "key" for GetApplication (which names
// another route) is NotFound without a request; times are sent in UTC
// (RFC 3339 writes offsets to the minute); InvokeProxy escapes its path
// and takes the keys from the call's fields, never from its headers. What
// stays different: such an id's NotFound carries no permission check
// (in process a key without token:read gets PermissionDenied for any
// token id), and messages may be worded differently.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Client calls one Token Vault server. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
	// stream is for Backup: hc, or, when New made hc, a client on the
	// same transport without its overall timeout.
	stream *http.Client
}

// New returns a client for the API mounted at baseURL (for example
// "http://127.0.0.1:8080"), calling it with hc. A nil hc means a client of
// its own (not http.DefaultClient, which waits forever): each call is
// bounded by DefaultTimeout, and connections by DefaultDialTimeout,
// DefaultTLSHandshakeTimeout and DefaultResponseHeaderTimeout (Backup by
// those and its context only). A context's deadline bounds a call as well,
// and its passing is reported as such: errors.Is(err,
// context.DeadlineExceeded). A server that cannot be reached is an
// Unavailable error naming baseURL and why (connection refused, timeout,
// TLS, unknown host).
func New(baseURL string, hc *http.Client) *Client {
	stream := hc
	if hc == nil {
		t := newTransport()
		hc = &http.Client{Transport: t, Timeout: DefaultTimeout}
		stream = &http.Client{Transport: t}
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), hc: hc, stream: stream}
}

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context that makes the client send key as
// the Idempotency-Key header of the POST it is used for: sending the same
// request again with the same key (after a timeout, say) answers the first
// response instead of creating a second resource. Use one key per logical
// request. See tokenvault.Vault.Idempotent for the rules.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// Header names of the API.
const (
	apiKeyHeader    = "SVC-API-KEY"
	purposeHeader   = "SVC-PURPOSE" // from tokenvault.WithPurpose
	mergePatchType  = "application/merge-patch+json"
	jsonContentType = "application/json"
)

// call is one request: method, path (with query), key, JSON body (nil for
// none; json.RawMessage sent as is) and where to decode the answer (nil to
// discard it).
type call struct {
	method, path string
	key          tokenvault.Credential
	body         any
	contentType  string
	out          any
	// fromCode marks a route that runs tenant code, whose own answers
	// (CustomHttpResponseError) are errors of the code: see problem.
	fromCode bool
	// approval marks a route an approval policy can hold: its 202 is a
	// *tokenvault.ApprovalRequired (approvalRequired).
	approval bool
	// approvalID, when set, is sent as SVC-APPROVAL-ID
	// (DetokenizeApproved).
	approvalID string
}

func (c *Client) do(ctx context.Context, r call) error {
	if dotOrEmptySegment(r.path) {
		return &tokenvault.Error{Kind: tokenvault.NotFound, Message: `not found: an id may not be empty, "." or ".."`}
	}
	var rd io.Reader
	if r.body != nil {
		b, ok := r.body.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(r.body); err != nil {
				return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the request cannot be encoded as JSON: " + err.Error()}
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, rd)
	if err != nil {
		return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "bad request: " + err.Error()}
	}
	if r.key != "" {
		req.Header.Set(apiKeyHeader, string(r.key))
	}
	if id := requestID(ctx); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if purpose := tokenvault.PurposeFrom(ctx); purpose != "" {
		req.Header.Set(purposeHeader, purpose)
	}
	if r.approvalID != "" {
		req.Header.Set("SVC-APPROVAL-ID", r.approvalID)
	}
	if k, ok := ctx.Value(idempotencyKeyCtx{}).(string); ok && r.method == http.MethodPost {
		req.Header.Set("Idempotency-Key", k)
	}
	if rd != nil {
		ct := r.contentType
		if ct == "" {
			ct = jsonContentType
		}
		req.Header.Set("Content-Type", ct)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return c.failed(ctx, "cannot be reached", err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return problem(res, r.fromCode)
	}
	if r.approval && res.StatusCode == http.StatusAccepted {
		return approvalRequired(res)
	}
	if r.out == nil || res.StatusCode == http.StatusNoContent {
		io.Copy(io.Discard, res.Body)
		return nil
	}
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(r.out); err != nil {
		if ctx.Err() != nil {
			return c.failed(ctx, "", err)
		}
		return &tokenvault.Error{Kind: tokenvault.Internal, Message: "the server's answer cannot be decoded", Err: err}
	}
	return nil
}

// kindOf maps statuses back to kinds, the inverse of httpapi's table.
var kindOf = map[int]tokenvault.Kind{
	400: tokenvault.Invalid, 401: tokenvault.Unauthenticated, 403: tokenvault.PermissionDenied,
	404: tokenvault.NotFound, 409: tokenvault.Conflict, 413: tokenvault.TooLarge,
	415: tokenvault.UnsupportedMediaType, 422: tokenvault.Unprocessable, 502: tokenvault.BadGateway,
	503: tokenvault.Unavailable, 500: tokenvault.Internal, 429: tokenvault.RateLimited,
	507: tokenvault.StorageFull,
	410: tokenvault.Gone,
}

// problem turns an error answer into an *tokenvault.Error. An error of
// tenant code is CodeFailed, as in process: a problem of type
// tokenvault.CodeFailedProblemType, a status no vault error has, or, from
// a route that runs code (fromCode), an answer that is no problem at all:
// a CustomHttpResponseError's own, whose body is kept in Body (decoded
// when it is JSON).
func problem(res *http.Response, fromCode bool) error {
	var p struct {
		Type   string              `json:"type"`
		Detail string              `json:"detail"`
		Errors map[string][]string `json:"errors"`
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	isProblem := strings.Contains(res.Header.Get("Content-Type"), "problem+json")
	json.Unmarshal(b, &p)
	custom := fromCode && !isProblem
	kind, ok := kindOf[res.StatusCode]
	if !ok || custom || p.Type == tokenvault.CodeFailedProblemType {
		kind = tokenvault.CodeFailed
	}
	switch {
	case res.StatusCode == http.StatusForbidden && p.Type == tokenvault.KeyFrozenProblemType:
		return tokenvault.ErrKeyFrozen // errors.Is holds as in process
	case res.StatusCode == http.StatusForbidden && p.Type == tokenvault.RevealBudgetProblemType:
		return tokenvault.ErrRevealBudget
	}
	msg := p.Detail
	if msg == "" || custom {
		msg = http.StatusText(res.StatusCode)
	}
	e := &tokenvault.Error{Kind: kind, Message: msg, Fields: p.Errors, Status: res.StatusCode}
	if e.Kind == tokenvault.RateLimited || e.Kind == tokenvault.StorageFull {
		e.RetryAfter = retryAfter(res.Header.Get("Retry-After"))
	}
	if e.Kind == tokenvault.CodeFailed && !isProblem {
		e.Fields, e.Body = nil, customBody(res.Header.Get("Content-Type"), b)
	}
	return e
}

// customBody is the body of a response tenant code built: its JSON value
// when it says it is JSON and is, or its text.
func customBody(contentType string, b []byte) any {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			return v
		}
	}
	return string(b)
}

// retryAfter reads a Retry-After header: delay seconds, or an HTTP date
// (counted from now); 0 when absent or unreadable.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if at, err := http.ParseTime(h); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// pageQuery adds page, size and the cursor start to q when set.
func pageQuery(q url.Values, p tokenvault.PageRequest) url.Values {
	if p.Page != 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	if p.Size != 0 {
		q.Set("size", strconv.Itoa(p.Size))
	}
	if p.Start != "" {
		q.Set("start", p.Start)
	}
	return q
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func esc(id string) string { return url.PathEscape(id) }

// dotOrEmptySegment reports whether path (its query aside) has an empty,
// "." or ".." segment, which only an id can have put there: the server
// would clean such a path, redirecting it, or serve another route, where
// in process the id names nothing.
func dotOrEmptySegment(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	if path == "/" {
		return false
	}
	for _, seg := range strings.Split(path[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
