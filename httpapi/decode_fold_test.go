package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// bodySchemas maps "METHOD /path" to the properties of its request body
// in the OpenAPI document (nil for a body the document gives none).
func bodySchemas(t *testing.T) map[string][]string {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	type schema struct {
		Ref        string `json:"$ref"`
		Properties map[string]json.RawMessage
	}
	resolve := func(raw json.RawMessage) schema {
		var s schema
		json.Unmarshal(raw, &s)
		for s.Ref != "" {
			name := s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
			s = schema{}
			json.Unmarshal(doc.Components.Schemas[name], &s)
		}
		return s
	}
	out := map[string][]string{}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				RequestBody *struct {
					Content map[string]struct{ Schema json.RawMessage }
				} `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil || op.RequestBody == nil {
				continue
			}
			var props []string
			for _, c := range op.RequestBody.Content {
				for p := range resolve(c.Schema).Properties {
					props = append(props, p)
				}
			}
			slices.Sort(props)
			out[strings.ToUpper(method)+" "+path] = props
		}
	}
	return out
}

// TestCaseVariantKeysEveryRoute: every route that decodes a body refuses
// an object holding one of its fields twice, in keys that differ only in
// case ({"name": ..., "NAME": ...}), with a 400 problem naming the
// field: encoding/json would keep one of the two without a word. The
// routes are the mux's, so that a new route cannot be missed: each takes
// a body the OpenAPI document describes, or is listed below as taking
// none, or as one whose body is not decoded into fields.
func TestCaseVariantKeysEveryRoute(t *testing.T) {
	opts := httpapi.Options{OperatorKey: operatorKey}
	s := newServer(t, opts)
	h := httpapi.New(s.v, opts)
	schemas := bodySchemas(t)
	// Routes that read no body, or whose body is no set of fields.
	noFields := map[string]string{
		"POST /applications/{id}/regenerate":                     "no body",
		"POST /applications/{id}/unfreeze":                       "no body",
		"POST /approvals/{id}/approve":                           "no body",
		"POST /tenants/self/rotate-data-key":                     "no body",
		"POST /tenants/self/rotate-fpe-key":                      "no body",
		"POST /sessions":                                         "no body",
		"POST /tenants/self/invitations/{id}/resend":             "no body",
		"POST /webhooks/{id}/rotate-secret":                      "no body",
		"POST /webhooks/{id}/deliveries/{delivery_id}/redeliver": "no body",
		"POST /webhooks/{id}/test":                               "no body",
		"POST /operator/tenants/{id}/audit/verify":               "no body",
		"POST /operator/audit/keys/rotate":                       "no body",
		"POST /operator/tenants/{id}/audit/checkpoints":          "no body",
		"POST /detokenize":                                       "any JSON value, keys kept exactly",
		"POST /tokens/import":                                    "NDJSON lines, each read as the exchange format",
	}
	// Bodies whose fields the document does not list.
	special := map[string]struct{ body, field string }{
		"POST /tokenize":       {`{"type": "token", "data": "a", "DATA": "b"}`, "data"},
		"PATCH /tokens/{id}":   {`{"metadata": {}, "METADATA": {}}`, "METADATA"},
		"PATCH /reactors/{id}": {`{"name": "a", "NAME": "b"}`, "NAME"},
		"PATCH /proxies/{id}":  {`{"name": "a", "NAME": "b"}`, "NAME"},
	}
	tested := 0
	for _, pattern := range httpapi.Routes(h) {
		method, path := concrete(pattern)
		if method != "POST" && method != "PUT" && method != "PATCH" {
			continue
		}
		if path == "/proxy" || strings.HasPrefix(path, "/proxy/") || noFields[pattern] != "" {
			continue // a proxy's body is the destination's
		}
		_, rawPath, _ := strings.Cut(pattern, " ")
		body, field := "", ""
		if sp, ok := special[pattern]; ok {
			body, field = sp.body, sp.field
		} else {
			props := schemas[method+" "+rawPath]
			if len(props) == 0 {
				t.Errorf("%s: the OpenAPI document gives no fields of its body; list it here", pattern)
				continue
			}
			field = props[0]
			body = `{"` + field + `": null, "` + strings.ToUpper(field) + `": null}`
		}
		tested++
		key := s.mgmt
		if strings.HasPrefix(path, "/operator/") {
			key = operatorKey
		}
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if method == "PATCH" {
			req.Header.Set("Content-Type", httpapi.MergePatchType)
		}
		req.Header.Set(httpapi.APIKeyHeader, key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		r := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
		if r.status != http.StatusBadRequest {
			t.Errorf("%s %s = %d %s, want 400", pattern, body, r.status, r.body)
			continue
		}
		p := r.problem(t)
		if p.Errors[field] == nil {
			t.Errorf("%s %s: errors %v, want one for %q", pattern, body, p.Errors, field)
			continue
		}
		// A merge patch's top-level fields are named exactly: NAME is
		// none of them. Any other body says the field is given twice.
		if method != "PATCH" && !strings.Contains(p.Errors[field][0], "more than once") {
			t.Errorf("%s %s: %s: %q, want it given more than once", pattern, body, field, p.Errors[field])
		}
	}
	if tested < 20 {
		t.Errorf("only %d routes tested", tested)
	}
}

// TestCaseVariantPermissionsOverHTTP: an application body giving its
// permissions twice, the second spelt in capitals or with a character
// that folds to an ASCII letter (ſ, U+017F, folds to s), is refused
// naming permissions, and nothing is created; a metadata map with keys
// that differ only in case is data, and kept.
func TestCaseVariantPermissionsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	for _, body := range []string{
		`{"name": "pub", "type": "public", "permissions": ["token:create"], "PERMISSIONS": ["token:read", "token:create"]}`,
		`{"name": "pub", "type": "public", "permissions": ["token:create"], "permiſſions": ["token:read", "token:create"]}`,
		`{"name": "pub", "type": "public", "permissions": ["token:create"], "Permissions": ["token:read"]}`,
	} {
		r := s.do(t, "POST", "/applications", s.mgmt, body)
		wantStatus(t, "POST /applications "+body, r, http.StatusBadRequest)
		if p := r.problem(t); p.Errors["permissions"] == nil {
			t.Errorf("POST /applications %s: errors %v, want permissions", body, p.Errors)
		}
	}
	r := s.do(t, "GET", "/applications", s.mgmt, nil)
	var apps tokenvault.Page[tokenvault.Application]
	r.json(t, &apps)
	for _, a := range apps.Data {
		if a.Name == "pub" {
			t.Errorf("an application was created: %+v", a)
		}
	}
	// Nested: a rule's permissions.
	r = s.do(t, "POST", "/applications", s.mgmt, `{"name": "p", "type": "private", "rules": [{"priority": 1, "container": "/", "transform": "mask", "permissions": ["token:read"], "PERMISSIONS": ["token:read", "token:update"]}]}`)
	wantStatus(t, "POST /applications with a rule's permissions twice", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["rules[0].permissions"] == nil {
		t.Errorf("errors %v, want rules[0].permissions", p.Errors)
	}

	_, key := s.app(t, map[string]any{"name": "c", "type": "private", "rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	r = s.do(t, "POST", "/tokens", key, `{"type": "token", "data": "x", "metadata": {"a": "1", "A": "2"}}`)
	wantStatus(t, "POST /tokens with metadata a and A", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.Metadata["a"] != "1" || tok.Metadata["A"] != "2" {
		t.Errorf("metadata = %v, want a and A kept", tok.Metadata)
	}
	r = s.do(t, "POST", "/tokens", key, `{"type": "token", "data": "x", "mas\u212a": "{{ data }}", "mask": "{{ data | last4 }}"}`)
	wantStatus(t, "POST /tokens with mask and mas\\u212a", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["mask"] == nil {
		t.Errorf("errors %v, want mask", p.Errors)
	}
	r = s.do(t, "POST", "/tokens", key, `{"type": "token", "data": "x", "metadata": {"a": "1", "a": "2"}}`)
	wantStatus(t, "POST /tokens with metadata a twice", r, http.StatusBadRequest)
}
