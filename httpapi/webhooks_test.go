package httpapi_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

var hookBody = map[string]any{"name": "orders", "url": "https://hooks.example.com/in",
	"events": []string{"token.created", "token.deleted"}, "notify_email": "ops@example.com"}

// TestWebhooksOverHTTP: create (201, the secret once), get and list
// without it, PUT replacing every field, rotate-secret (a new secret and
// the overlap's end), DELETE (204, then 404); the event types are the
// catalogue's names; bad requests are problems naming their field; the
// secrets are in no other answer nor in the audit log.
func TestWebhooksOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/webhooks", s.mgmt, hookBody)
	wantStatus(t, "POST /webhooks", r, http.StatusCreated)
	var w tokenvault.WebhookSubscription
	r.json(t, &w)
	if !strings.HasPrefix(w.Secret, "whsec_") || w.Status != "enabled" || w.Name != "orders" || w.TenantID != s.boot.Tenant.ID {
		t.Fatalf("created %s", r.body)
	}
	secrets := []string{w.Secret}

	r = s.do(t, "GET", "/webhooks/"+w.ID, s.mgmt, nil)
	wantStatus(t, "GET /webhooks/{id}", r, http.StatusOK)
	if bytes.Contains(r.body, []byte("secret\"")) || bytes.Contains(r.body, []byte("whsec_")) {
		t.Errorf("GET shows a secret: %s", r.body)
	}
	r = s.do(t, "GET", "/webhooks", s.mgmt, nil)
	wantStatus(t, "GET /webhooks", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.WebhookSubscription]
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].ID != w.ID || page.Pagination.TotalItems != 1 || bytes.Contains(r.body, []byte("whsec_")) {
		t.Errorf("GET /webhooks = %s", r.body)
	}

	r = s.do(t, "PUT", "/webhooks/"+w.ID, s.mgmt, map[string]any{"name": "all", "url": "https://other.example.com/h",
		"events": []string{"*"}, "status": "disabled"})
	wantStatus(t, "PUT /webhooks/{id}", r, http.StatusOK)
	var up tokenvault.WebhookSubscription
	r.json(t, &up)
	if up.Name != "all" || up.Status != "disabled" || up.NotifyEmail != "" || up.ModifiedAt == nil || bytes.Contains(r.body, []byte("whsec_")) {
		t.Errorf("PUT = %s", r.body)
	}

	r = s.do(t, "POST", "/webhooks/"+w.ID+"/rotate-secret", s.mgmt, nil)
	wantStatus(t, "POST rotate-secret", r, http.StatusOK)
	var rot tokenvault.WebhookSubscription
	r.json(t, &rot)
	if !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == w.Secret || rot.PreviousSecretUntil == nil {
		t.Errorf("rotated %s", r.body)
	}
	secrets = append(secrets, rot.Secret)

	r = s.do(t, "GET", "/webhooks/event-types", s.mgmt, nil)
	wantStatus(t, "GET /webhooks/event-types", r, http.StatusOK)
	var names []string
	r.json(t, &names)
	var want []string
	for _, et := range tokenvault.WebhookEventTypes() {
		want = append(want, et.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("event types %s, want %v", r.body, want)
	}

	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"no name":       {map[string]any{"url": "https://hooks.example.com/in", "events": []string{"*"}}, "name"},
		"ftp url":       {map[string]any{"name": "x", "url": "ftp://hooks.example.com/in", "events": []string{"*"}}, "url"},
		"unknown event": {map[string]any{"name": "x", "url": "https://hooks.example.com/in", "events": []string{"token.exploded"}}, "events[0]"},
		"no events":     {map[string]any{"name": "x", "url": "https://hooks.example.com/in"}, "events"},
		"bad status":    {map[string]any{"name": "x", "url": "https://hooks.example.com/in", "events": []string{"*"}, "status": "on"}, "status"},
		"bad email":     {map[string]any{"name": "x", "url": "https://hooks.example.com/in", "events": []string{"*"}, "notify_email": "x"}, "notify_email"},
	} {
		for _, req := range []struct{ method, path string }{{"POST", "/webhooks"}, {"PUT", "/webhooks/" + w.ID}} {
			r := s.do(t, req.method, req.path, s.mgmt, tc.body)
			wantStatus(t, req.method+" "+name, r, http.StatusBadRequest)
			if p := r.problem(t); len(p.Errors[tc.field]) == 0 {
				t.Errorf("%s %s: problem %+v does not name %s", req.method, name, p, tc.field)
			}
		}
	}
	r = s.do(t, "POST", "/webhooks", s.mgmt, map[string]any{"name": "x", "url": "https://hooks.example.com/in", "events": []string{"*"}, "secret": "whsec_mine"})
	wantStatus(t, "POST with a secret of the caller's", r, http.StatusBadRequest)
	wantStatus(t, "GET /webhooks?name=x", s.do(t, "GET", "/webhooks?name=x", s.mgmt, nil), http.StatusBadRequest)
	wantStatus(t, "GET /webhooks?size=101", s.do(t, "GET", "/webhooks?size=101", s.mgmt, nil), http.StatusBadRequest)

	r = s.do(t, "GET", "/logs?entity_type=webhook", s.mgmt, nil)
	wantStatus(t, "GET /logs", r, http.StatusOK)
	for _, sec := range secrets {
		if bytes.Contains(r.body, []byte(strings.TrimPrefix(sec, "whsec_"))) {
			t.Errorf("the audit log holds a secret: %s", r.body)
		}
	}
	if !bytes.Contains(r.body, []byte(`"operation":"create"`)) || !bytes.Contains(r.body, []byte(`"operation":"update"`)) {
		t.Errorf("the audit log misses the webhook's lines: %s", r.body)
	}

	wantStatus(t, "DELETE /webhooks/{id}", s.do(t, "DELETE", "/webhooks/"+w.ID, s.mgmt, nil), http.StatusNoContent)
	r = s.do(t, "GET", "/webhooks/"+w.ID, s.mgmt, nil)
	wantStatus(t, "GET after DELETE", r, http.StatusNotFound)
	r.problem(t)
}

// TestWebhookSSRFOverHTTP: a server whose Vault does not allow private
// destinations refuses each SSRF spelling of a receiver's URL with a
// problem naming url.
func TestWebhookSSRFOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	for _, u := range []string{"https://127.0.0.1/in", "https://[::1]/in", "https://localhost./in", "https://10.1.2.3/in",
		"https://169.254.169.254/latest/meta-data/", "https://[::ffff:127.0.0.1]/in", "https://0.0.0.0/in", "https://100.64.0.1/in",
		"https://2130706433/in", "https://0x7f.1/in", "http://hooks.example.com/in"} {
		r := s.do(t, "POST", "/webhooks", s.mgmt, map[string]any{"name": "x", "url": u, "events": []string{"*"}})
		wantStatus(t, "POST /webhooks "+u, r, http.StatusBadRequest)
		if p := r.problem(t); len(p.Errors["url"]) == 0 {
			t.Errorf("%s: problem %+v does not name url", u, p)
		}
	}
	wantStatus(t, "a public receiver", s.do(t, "POST", "/webhooks", s.mgmt, hookBody), http.StatusCreated)
}

// TestWebhookLimitAndIsolationOverHTTP: past Options.Webhooks.MaxPerTenant
// a creation is 409; another tenant's key gets 404 for every route of a
// tenant's webhook and an empty list.
func TestWebhookLimitAndIsolationOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Webhooks.MaxPerTenant = 2 })
	var w tokenvault.WebhookSubscription
	for range 2 {
		r := s.do(t, "POST", "/webhooks", s.mgmt, hookBody)
		wantStatus(t, "POST /webhooks", r, http.StatusCreated)
		r.json(t, &w)
	}
	r := s.do(t, "POST", "/webhooks", s.mgmt, hookBody)
	wantStatus(t, "the 3rd webhook", r, http.StatusConflict)
	r.problem(t)

	other, err := s.v.CreateTenant(t.Context(), tokenvault.CreateTenantRequest{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	key := string(other.Application.Key)
	for _, rt := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/webhooks/" + w.ID, nil},
		{"PUT", "/webhooks/" + w.ID, hookBody},
		{"POST", "/webhooks/" + w.ID + "/rotate-secret", nil},
		{"DELETE", "/webhooks/" + w.ID, nil},
	} {
		r := s.do(t, rt.method, rt.path, key, rt.body)
		wantStatus(t, "another tenant's "+rt.method+" "+rt.path, r, http.StatusNotFound)
		r.problem(t)
	}
	r = s.do(t, "GET", "/webhooks", key, nil)
	wantStatus(t, "another tenant's list", r, http.StatusOK)
	if !bytes.Contains(r.body, []byte(`"data":[]`)) {
		t.Errorf("another tenant's list = %s", r.body)
	}
	wantStatus(t, "the other tenant's own first webhook", s.do(t, "POST", "/webhooks", key, hookBody), http.StatusCreated)
}

// TestWebhookPermissionsOverHTTP: each route answers 401 without a key,
// 403 to a management key holding every permission but its own, and
// succeeds with exactly its own; a private or public application cannot
// be given a webhook permission.
func TestWebhookPermissionsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	mk := func(perms ...string) string {
		_, key := s.app(t, map[string]any{"name": "m", "type": "management", "permissions": perms})
		return key
	}
	target := func() string {
		r := s.do(t, "POST", "/webhooks", s.mgmt, hookBody)
		wantStatus(t, "POST /webhooks", r, http.StatusCreated)
		var w tokenvault.WebhookSubscription
		r.json(t, &w)
		return w.ID
	}
	for _, rt := range []struct {
		method, path, perm string
		body               any
		ok                 int
	}{
		{"POST", "/webhooks", "webhook:create", hookBody, 201},
		{"GET", "/webhooks", "webhook:read", nil, 200},
		{"GET", "/webhooks/event-types", "webhook:read", nil, 200},
		{"GET", "/webhooks/{id}", "webhook:read", nil, 200},
		{"PUT", "/webhooks/{id}", "webhook:update", hookBody, 200},
		{"POST", "/webhooks/{id}/rotate-secret", "webhook:update", nil, 200},
		{"DELETE", "/webhooks/{id}", "webhook:delete", nil, 204},
	} {
		path := strings.Replace(rt.path, "{id}", target(), 1)
		var others []string
		for _, p := range tokenvault.PermissionsFor(tokenvault.Management) {
			if p != rt.perm {
				others = append(others, p)
			}
		}
		r := s.do(t, rt.method, path, "", rt.body)
		wantStatus(t, rt.method+" "+rt.path+" without a key", r, http.StatusUnauthorized)
		r.problem(t)
		r = s.do(t, rt.method, path, mk(others...), rt.body)
		wantStatus(t, rt.method+" "+rt.path+" without "+rt.perm, r, http.StatusForbidden)
		r.problem(t)
		wantStatus(t, rt.method+" "+rt.path+" with exactly "+rt.perm, s.do(t, rt.method, path, mk(rt.perm), rt.body), rt.ok)
	}
	for _, typ := range []string{"private", "public"} {
		r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "x", "type": typ, "permissions": []string{"webhook:read"}})
		wantStatus(t, "a "+typ+" application given webhook:read", r, http.StatusBadRequest)
		r.problem(t)
	}
}

// TestWebhookAddressSpellingsOverHTTP: where private destinations are
// allowed (development), http to a remote host, a host spelt with
// Unicode digits or dots, and a notify_email that is an address literal,
// a local name or a mixed-script look-alike are each a 400 naming the
// field, at POST and PUT; http to loopback is accepted.
func TestWebhookAddressSpellingsOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	r := s.do(t, "POST", "/webhooks", s.mgmt, hookBody)
	wantStatus(t, "POST /webhooks", r, http.StatusCreated)
	var w tokenvault.WebhookSubscription
	r.json(t, &w)
	body := func(url, email string) map[string]any {
		return map[string]any{"name": "x", "url": url, "events": []string{"*"}, "notify_email": email}
	}
	cases := map[string]struct {
		body  map[string]any
		field string
	}{}
	for _, u := range []string{"http://hooks.example.com/in", "http://10.0.0.1/in", "https://127.0.0.\u2460/in",
		"https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/in", "https://127\u30020\u30020\u30021/in"} {
		cases[u] = struct {
			body  map[string]any
			field string
		}{body(u, "ops@example.com"), "url"}
	}
	for _, m := range []string{"a@[127.0.0.1]", "a@localhost", "a@127.0.0.1", "p\u0430ypal@example.com"} {
		cases[m] = struct {
			body  map[string]any
			field string
		}{body("https://hooks.example.com/in", m), "notify_email"}
	}
	for name, tc := range cases {
		for _, req := range []struct{ method, path string }{{"POST", "/webhooks"}, {"PUT", "/webhooks/" + w.ID}} {
			r := s.do(t, req.method, req.path, s.mgmt, tc.body)
			wantStatus(t, req.method+" "+name, r, http.StatusBadRequest)
			if p := r.problem(t); len(p.Errors[tc.field]) == 0 {
				t.Errorf("%s %s: problem %+v does not name %s", req.method, name, p, tc.field)
			}
		}
	}
	wantStatus(t, "http to loopback", s.do(t, "PUT", "/webhooks/"+w.ID, s.mgmt, body("http://127.0.0.1:8080/in", "ops@example.com")), http.StatusOK)
}
