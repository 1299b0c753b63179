package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// fieldsOf decodes a JSON object answer.
func fieldsOf(t *testing.T, r response) map[string]any {
	t.Helper()
	var m map[string]any
	r.json(t, &m)
	return m
}

// wantFields fails unless every dotted path is present in m with a value
// of the JSON kind given ("string", "number", "bool", "object", "array").
func wantFields(t *testing.T, what string, m map[string]any, paths map[string]string) {
	t.Helper()
	for path, kind := range paths {
		var cur any = m
		for _, name := range strings.Split(path, ".") {
			obj, _ := cur.(map[string]any)
			cur = obj[name]
		}
		ok := false
		switch cur.(type) {
		case string:
			ok = kind == "string"
		case float64:
			ok = kind == "number"
		case bool:
			ok = kind == "bool"
		case map[string]any:
			ok = kind == "object"
		case []any:
			ok = kind == "array"
		}
		if !ok {
			t.Errorf("%s: %s = %#v, want a %s (spec field)", what, path, cur, kind)
		}
	}
}

// TestSpecFields holds every resource the spec describes to its field
// table: each field it lists is in the answer, by that name and type.
func TestSpecFields(t *testing.T) {
	t.Parallel()
	box := &testfake.Mailer{}
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Mailer = box })
	audit := map[string]string{"created_by": "string", "created_at": "string"}
	with := func(m map[string]string, more map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}

	// Application (create, with key; get, without).
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "backend", "type": "private",
		"expires_at": "2099-01-01T00:00:00Z",
		"rules": []map[string]any{{"description": "all", "priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:use"}}}})
	wantStatus(t, "POST /applications", r, http.StatusCreated)
	app := fieldsOf(t, r)
	wantFields(t, "Application", app, with(audit, map[string]string{"id": "string", "tenant_id": "string", "name": "string",
		"key": "string", "type": "string", "permissions": "array", "rules": "array", "expires_at": "string"}))
	rule := app["rules"].([]any)[0].(map[string]any)
	wantFields(t, "Access Rule", rule, map[string]string{"description": "string", "priority": "number", "container": "string",
		"transform": "string", "permissions": "array"})
	key := app["key"].(string)
	r = s.do(t, "GET", "/applications/"+app["id"].(string), s.mgmt, nil)
	if _, ok := fieldsOf(t, r)["key"]; ok {
		t.Error("GET /applications/{id} shows the key")
	}

	// Token, as returned by tokenize: a card with its evaluated mask.
	r = s.do(t, "POST", "/tokenize", key, map[string]any{"type": "card",
		"data":     map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"},
		"metadata": map[string]string{"ref": "A1"}, "search_indexes": []string{"{{ data.number | last4 }}"}})
	wantStatus(t, "POST /tokenize", r, http.StatusCreated)
	card := fieldsOf(t, r)
	wantFields(t, "Token", card, with(audit, map[string]string{"id": "string", "tenant_id": "string", "type": "string",
		"mask": "object", "mask.number": "string", "mask.expiration_month": "number", "mask.expiration_year": "number",
		"metadata": "object", "search_indexes": "array", "fingerprint_expression": "string"}))
	if card["mask"].(map[string]any)["number"] != "XXXXXXXXXXXX4242" || card["fingerprint_expression"] != "{{ data.number }}" {
		t.Errorf("card token: mask %v, fingerprint_expression %v", card["mask"], card["fingerprint_expression"])
	}

	// Session create response.
	_, pub := s.app(t, map[string]any{"name": "pub", "type": "public", "permissions": []string{"token:create"}})
	r = s.do(t, "POST", "/sessions", pub, nil)
	wantStatus(t, "POST /sessions", r, http.StatusCreated)
	wantFields(t, "Session", fieldsOf(t, r), map[string]string{"session_key": "string", "nonce": "string", "expires_at": "string"})

	// Log and Entity Type.
	r = s.do(t, "GET", "/logs?entity_type=application", s.mgmt, nil)
	var logs struct{ Data []map[string]any }
	r.json(t, &logs)
	if len(logs.Data) == 0 {
		t.Fatal("no logs")
	}
	wantFields(t, "Log", logs.Data[0], map[string]string{"tenant_id": "string", "actor_id": "string", "actor_type": "string",
		"entity_type": "string", "entity_id": "string", "operation": "string", "message": "string", "created_at": "string"})
	r = s.do(t, "GET", "/logs/entity-types", s.mgmt, nil)
	var types []map[string]any
	r.json(t, &types)
	seen := map[any]bool{}
	for _, et := range types {
		wantFields(t, "Entity Type", et, map[string]string{"display_name": "string", "value": "string"})
		seen[et["value"]] = true
	}
	for _, v := range []string{"application", "bank", "card", "proxy"} {
		if !seen[v] {
			t.Errorf("entity types lack %s", v)
		}
	}

	// Tenant Member, with its User; Tenant Invitation.
	r = s.do(t, "GET", "/tenants/self/members", s.mgmt, nil)
	var members struct{ Data []map[string]any }
	r.json(t, &members)
	wantFields(t, "Tenant Member", members.Data[0], map[string]string{"id": "string", "tenant_id": "string", "role": "string",
		"user": "object", "user.id": "string"})
	r = s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "ada@example.com"})
	wantStatus(t, "POST /tenants/self/invitations", r, http.StatusCreated)
	inv := fieldsOf(t, r)
	wantFields(t, "Tenant Invitation", inv, map[string]string{"id": "string", "tenant_id": "string", "email": "string",
		"status": "string", "expires_at": "string"})
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": box.Token(),
		"user": map[string]any{"email": "ada@example.com", "first_name": "Ada", "last_name": "L", "picture": "https://example.com/a.png"}})
	wantStatus(t, "accept", r, http.StatusCreated)
	wantFields(t, "Tenant Member (accepted)", fieldsOf(t, r), map[string]string{"user.id": "string", "user.email": "string",
		"user.first_name": "string", "user.last_name": "string", "user.picture": "string"})

	// Reactor, with its formula and application; Reactor Response.
	r = s.do(t, "POST", "/reactor-formulas", s.mgmt, map[string]any{"name": "f",
		"code":               "module.exports = async (req) => ({raw: {n: req.args.n}, tokenize: {t: 'secret'}})",
		"configuration":      []map[string]any{{"name": "tz", "type": "string"}},
		"request_parameters": []map[string]any{{"name": "n", "type": "number", "optional": true}}})
	wantStatus(t, "POST /reactor-formulas", r, http.StatusCreated)
	formula := fieldsOf(t, r)
	appID := app["id"].(string)
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "r", "formula": map[string]any{"id": formula["id"]},
		"configuration": map[string]any{"tz": "UTC"}, "application": map[string]any{"id": appID}})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	reactor := fieldsOf(t, r)
	wantFields(t, "Reactor", reactor, map[string]string{"id": "string", "tenant_id": "string", "name": "string",
		"formula": "object", "formula.id": "string", "formula.configuration": "array", "formula.request_parameters": "array",
		"configuration": "object", "application": "object", "application.id": "string"})
	param := reactor["formula"].(map[string]any)["request_parameters"].([]any)[0].(map[string]any)
	wantFields(t, "Request Parameter", param, map[string]string{"name": "string", "type": "string", "optional": "bool"})
	r = s.do(t, "POST", "/reactors/"+reactor["id"].(string)+"/react", key, map[string]any{"args": map[string]any{"n": 1}})
	wantStatus(t, "POST /reactors/{id}/react", r, http.StatusOK)
	wantFields(t, "Reactor Response", fieldsOf(t, r), map[string]string{"tokens": "object", "tokens.t": "string", "raw": "object"})

	// Proxy.
	r = s.do(t, "POST", "/proxies", s.mgmt, map[string]any{"name": "p", "destination_url": "https://example.com/pay",
		"request_transform":  map[string]any{"code": "module.exports = async (req) => req.args"},
		"response_transform": map[string]any{"code": "module.exports = async (req) => req.args"},
		"application":        map[string]any{"id": appID}, "configuration": map[string]any{"k": "v"}, "require_auth": false})
	wantStatus(t, "POST /proxies", r, http.StatusCreated)
	wantFields(t, "Proxy", fieldsOf(t, r), map[string]string{"id": "string", "tenant_id": "string", "name": "string",
		"key": "string", "destination_url": "string", "request_transform.code": "string", "response_transform.code": "string",
		"application_id": "string", "configuration": "object", "require_auth": "bool"})
}
