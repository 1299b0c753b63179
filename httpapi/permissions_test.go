package httpapi_test

import (
	"context"
	"net/http"
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
		a, err := s.v.CreateApplication(ctx, s.mgmt, tokenvault.CreateApplicationRequest{Name: "m", Type: typ, Permissions: perms})
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
			r = s.do(t, rt.method, path, without.Key, rt.body)
			wantStatus(t, "without "+rt.perm, r, http.StatusForbidden)
			r.problem(t)
			wantStatus(t, "with exactly "+rt.perm, s.do(t, rt.method, path, exact.Key, rt.body), rt.ok)
		})
	}
}
