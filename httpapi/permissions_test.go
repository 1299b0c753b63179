package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestPermissionMatrixOverHTTP calls every route with a key holding exactly
// its permission (success), every other management permission (403) and no
// key (401).
func TestPermissionMatrixOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	ctx := context.Background()
	mk := func(typ tokenvault.ApplicationType, perms ...string) *tokenvault.Application {
		a, err := s.v.CreateApplication(ctx, tokenvault.Credential(s.mgmt), tokenvault.CreateApplicationRequest{Name: "m", Type: typ, Permissions: perms})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	routes := []struct {
		method, path, perm string
		body               any
		ok                 int
	}{
		{"POST", "/applications", "application:create", map[string]any{"name": "x", "type": "private", "permissions": []string{"token:read"}}, 201},
		{"GET", "/applications", "application:read", nil, 200},
		{"GET", "/applications/{id}", "application:read", nil, 200},
		{"GET", "/applications/key", "application:read", nil, 200},
		{"PUT", "/applications/{id}", "application:update", map[string]any{"name": "y", "permissions": []string{"token:use"}}, 200},
		{"POST", "/applications/{id}/regenerate", "application:update", nil, 200},
		{"DELETE", "/applications/{id}", "application:delete", nil, 204},
		{"GET", "/logs", "log:read", nil, 200},
		{"GET", "/logs/entity-types", "log:read", nil, 200},
		{"GET", "/tenants/self", "tenant:read", nil, 200},
		{"POST", "/tenants/self/rotate-data-key", "tenant:update", nil, 204},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			target := mk(tokenvault.Private, "token:read").ID
			path := rt.path
			if i := len("/applications/{id}"); len(path) >= i && path[:i] == "/applications/{id}" {
				path = "/applications/" + target + path[i:]
			}
			exact := mk(tokenvault.Management, rt.perm)
			var others []string
			for _, p := range tokenvault.PermissionsFor(tokenvault.Management) {
				if p != rt.perm {
					others = append(others, p)
				}
			}
			without := mk(tokenvault.Management, others...)
			r := s.do(t, rt.method, path, "", rt.body)
			wantStatus(t, "no key", r, http.StatusUnauthorized)
			r.problem(t)
			r = s.do(t, rt.method, path, string(without.Key), rt.body)
			wantStatus(t, "without "+rt.perm, r, http.StatusForbidden)
			r.problem(t)
			wantStatus(t, "with exactly "+rt.perm, s.do(t, rt.method, path, string(exact.Key), rt.body), rt.ok)
		})
	}
}

// TestTokenPermissionMatrixOverHTTP calls every token route with a private
// key holding exactly its permission (success), every other token
// permission (403), the management key (403) and no key (401).
func TestTokenPermissionMatrixOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	ctx := context.Background()
	mk := func(perms ...string) *tokenvault.Application {
		a, err := s.v.CreateApplication(ctx, tokenvault.Credential(s.mgmt), tokenvault.CreateApplicationRequest{Name: "p", Type: tokenvault.Private, Permissions: perms})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	creator := mk("token:create")
	all := tokenvault.PermissionsFor(tokenvault.Private)
	routes := []struct {
		method, path, perm string
		body               any
		ok                 int
		header             []string
	}{
		{"POST", "/tokenize", "token:create", map[string]any{"a": "b"}, 201, nil},
		{"POST", "/tokens", "token:create", map[string]any{"type": "token", "data": "x"}, 201, nil},
		{"GET", "/tokens/{id}", "token:read", nil, 200, nil},
		{"GET", "/tokens", "token:read", nil, 200, nil},
		{"POST", "/detokenize", "token:read", map[string]any{"v": "{{ {id} }}"}, 200, nil},
		{"POST", "/tokens/search", "token:search", map[string]any{"query": "data:x"}, 200, nil},
		{"PATCH", "/tokens/{id}", "token:update", `{"metadata": {"a": "b"}}`, 200, []string{"Content-Type", "application/merge-patch+json"}},
		{"DELETE", "/tokens/{id}", "token:delete", nil, 204, nil},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			tok, err := s.v.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
			if err != nil {
				t.Fatal(err)
			}
			path := strings.ReplaceAll(rt.path, "{id}", tok.ID)
			body := rt.body
			if m, ok := body.(map[string]any); ok && m["v"] != nil {
				body = map[string]any{"v": "{{ " + tok.ID + " }}"}
			}
			exact := mk(rt.perm)
			var others []string
			for _, p := range all {
				if p != rt.perm {
					others = append(others, p)
				}
			}
			without := mk(others...)
			for _, c := range []struct {
				what   string
				key    string
				status int
			}{
				{"no key", "", http.StatusUnauthorized},
				{"without " + rt.perm, string(without.Key), http.StatusForbidden},
				{"management key", s.mgmt, http.StatusForbidden},
			} {
				r := s.do(t, rt.method, path, c.key, body, rt.header...)
				wantStatus(t, c.what, r, c.status)
				r.problem(t)
			}
			wantStatus(t, "with exactly "+rt.perm, s.do(t, rt.method, path, string(exact.Key), body, rt.header...), rt.ok)
		})
	}
}
