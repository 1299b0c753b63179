// Package openapitest holds the REST interface to its OpenAPI document in
// tests: [Mount] serves a Vault through httpapi exactly as a program
// would, and checks every response, and every request the handler
// accepted, against the document: its parameters, headers and statuses
// with kin-openapi, its JSON bodies with the document's schemas compiled
// once (bodySchemas).
//
// It is imported only by tests, so the library itself does not depend on
// kin-openapi.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

var (
	loadOnce sync.Once
	doc      *openapi3.T
	loadErr  error
)

// Document returns the parsed, validated document httpapi serves.
func Document() (*openapi3.T, error) {
	loadOnce.Do(func() {
		doc, loadErr = openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
		if loadErr == nil {
			loadErr = doc.Validate(context.Background())
		}
	})
	return doc, loadErr
}

// Coverage counts, per operation id, the responses validated by status.
type Coverage struct {
	mu   sync.Mutex
	seen map[string]map[int]int
}

func (c *Coverage) add(op string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]map[int]int{}
	}
	if c.seen[op] == nil {
		c.seen[op] = map[int]int{}
	}
	c.seen[op][status]++
}

// Succeeded lists, sorted, the operation ids validated with a 2xx answer.
func (c *Coverage) Succeeded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ops []string
	for op, statuses := range c.seen {
		for s := range statuses {
			if s >= 200 && s < 300 {
				ops = append(ops, op)
				break
			}
		}
	}
	sort.Strings(ops)
	return ops
}

// Missing lists the document's operation ids not in Succeeded.
func (c *Coverage) Missing() []string {
	d, err := Document()
	if err != nil {
		return []string{err.Error()}
	}
	ok := map[string]bool{}
	for _, op := range c.Succeeded() {
		ok[op] = true
	}
	var missing []string
	for _, item := range d.Paths.Map() {
		for _, op := range item.Operations() {
			if !ok[op.OperationID] {
				missing = append(missing, op.OperationID)
			}
		}
	}
	sort.Strings(missing)
	return missing
}

type routeKey struct{}

// Mount returns httpapi.New(v, opts), wrapped so that every response is
// validated against the document (and every request answered 2xx, since
// the document must describe what the handler accepts). A mismatch fails
// t. Validated responses are counted in cov, if not nil.
func Mount(t testing.TB, v *tokenvault.Vault, opts httpapi.Options, cov *Coverage) http.Handler {
	d, err := Document()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	observe := opts.Observe
	opts.Observe = func(ctx context.Context, o httpapi.Observation) {
		if route, ok := ctx.Value(routeKey{}).(*string); ok {
			*route = o.Route
		}
		if observe != nil {
			observe(ctx, o)
		}
	}
	h := httpapi.New(v, opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		var route string
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeKey{}, &route)))
		if route == "" {
			return // 404 or 405 from the mux: no operation to hold it to
		}
		if err := check(d, r, reqBody, route, rec, cov); err != nil {
			t.Errorf("%s %s (route %s) answered %d: does not match openapi.yaml: %v\nbody: %.600s",
				r.Method, r.URL.Path, route, rec.status(), err, rec.body.Bytes())
		}
	})
}

// check validates one exchange.
func check(d *openapi3.T, r *http.Request, reqBody []byte, pattern string, rec *recorder, cov *Coverage) error {
	path := strings.ReplaceAll(pattern, "...}", "}")
	item := d.Paths.Find(path)
	// The handler serves /applications/ as /applications (but /proxy/x/
	// as it is: that path is the caller's).
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasPrefix(p, "/proxy/") {
		r = r.Clone(r.Context())
		r.URL.Path = p[:len(p)-1]
		r.URL.RawPath = ""
	}
	if item == nil {
		return fmt.Errorf("no path %s in the document", path)
	}
	op := item.GetOperation(r.Method)
	if op == nil {
		return fmt.Errorf("no %s operation on %s in the document", r.Method, path)
	}
	params, err := pathParams(path, r.URL.Path)
	if err != nil {
		return err
	}
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      &routers.Route{Spec: d, Path: path, PathItem: item, Method: r.Method, Operation: op},
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	bodies, err := loadBodySchemas()
	if err != nil {
		return err
	}
	method := strings.ToLower(r.Method)
	status := rec.status()
	var errs []error
	if status >= 200 && status < 300 && !isProxy(op) {
		// A JSON body is validated against its compiled schema
		// (bodySchemas), the rest of the request by kin-openapi.
		mt := mediaType(r.Header.Get("Content-Type"))
		jsonBody := len(reqBody) > 0 && isJSON(mt) && op.RequestBody != nil && op.RequestBody.Value != nil
		in.Options.ExcludeRequestBody = jsonBody
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			errs = append(errs, fmt.Errorf("request: %w", err))
		}
		if jsonBody {
			if key := contentKey(op.RequestBody.Value.Content, mt); key == "" {
				errs = append(errs, fmt.Errorf("request: content type %q is not one the document gives", mt))
			} else if err := bodies.validate(reqBody, "paths", path, method, "requestBody", "content", key, "schema"); err != nil {
				errs = append(errs, fmt.Errorf("request body: %w", err))
			}
		}
	}
	respMT := mediaType(rec.Header().Get("Content-Type"))
	// A proxy's answer is its destination's, whatever its type: nothing
	// of its body is ours to describe.
	jsonResponse := rec.body.Len() > 0 && isJSON(respMT) && !isProxy(op)
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			ExcludeResponseBody: jsonResponse || isProxy(op)},
	}
	out.SetBodyBytes(rec.body.Bytes())
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		errs = append(errs, fmt.Errorf("response: %w", err))
	}
	if jsonResponse {
		key := strconv.Itoa(status)
		resp := op.Responses.Value(key)
		if resp == nil {
			key, resp = "default", op.Responses.Default()
		}
		switch {
		case resp == nil || resp.Value == nil || len(resp.Value.Content) == 0:
			// No status or no content described: kin-openapi has said so
			// above, or there is nothing to hold the body to.
		case contentKey(resp.Value.Content, respMT) == "":
			errs = append(errs, fmt.Errorf("response: content type %q is not one the document gives for %s", respMT, key))
		default:
			if err := bodies.validate(rec.body.Bytes(), "paths", path, method, "responses", key, "content", contentKey(resp.Value.Content, respMT), "schema"); err != nil {
				errs = append(errs, fmt.Errorf("response body: %w", err))
			}
		}
	}
	if len(errs) == 0 && cov != nil {
		cov.add(op.OperationID, status)
	}
	return errors.Join(errs...)
}

// isProxy reports whether op forwards to a proxy's destination: what
// such a request carries is the destination's business.
func isProxy(op *openapi3.Operation) bool { return strings.HasPrefix(op.OperationID, "invokeProxy") }

// pathParams matches a request path to a document path template; the
// last parameter of a template takes the rest of the path, slashes
// included (the handler's {name...} wildcard).
func pathParams(template, path string) (map[string]string, error) {
	tsegs := strings.Split(strings.TrimPrefix(template, "/"), "/")
	psegs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	params := map[string]string{}
	for i, ts := range tsegs {
		if i >= len(psegs) {
			return nil, fmt.Errorf("path %s does not match %s", path, template)
		}
		name, isParam := strings.CutPrefix(ts, "{")
		if !isParam {
			if ts != psegs[i] {
				return nil, fmt.Errorf("path %s does not match %s", path, template)
			}
			continue
		}
		name = strings.TrimSuffix(name, "}")
		if i == len(tsegs)-1 {
			params[name] = strings.Join(psegs[i:], "/")
			return params, nil
		}
		params[name] = psegs[i]
	}
	if len(psegs) != len(tsegs) {
		return nil, fmt.Errorf("path %s does not match %s", path, template)
	}
	return params, nil
}

// recorder passes a response through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
