package events_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// hookRequest is a valid webhook request of the tests.
func hookRequest(name string) tokenvault.WebhookRequest {
	return tokenvault.WebhookRequest{Name: name, URL: "https://hooks.example.com/in",
		Events: []string{tokenvault.EventTokenCreated, tokenvault.EventTokenDeleted}, NotifyEmail: "ops@example.com"}
}

// checkSecret fails unless s is a signing secret: "whsec_" and the
// standard base64 of 32 bytes.
func checkSecret(t *testing.T, s string) {
	t.Helper()
	b64, ok := strings.CutPrefix(s, "whsec_")
	b, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(b) != 32 {
		t.Fatalf("secret %q is not whsec_ and the base64 of 32 bytes (%v)", s, err)
	}
}

// TestWebhookLifecycle: create answers the webhook with its secret (once),
// get and list never show it, update replaces every field, rotate answers
// a new secret and the overlap's end, delete removes it; each change is an
// audit line of entity type webhook that holds no secret.
func TestWebhookLifecycle(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		ctx := context.Background()
		w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("orders"))
		if err != nil {
			t.Fatal(err)
		}
		checkSecret(t, w.Secret)
		if w.Status != tokenvault.WebhookEnabled || w.TenantID != e.Boot.Tenant.ID || w.Name != "orders" ||
			w.URL != "https://hooks.example.com/in" || w.NotifyEmail != "ops@example.com" || w.CreatedBy != e.Boot.Application.ID ||
			!w.CreatedAt.Equal(e.Clock.Now()) || w.ModifiedAt != nil || w.PreviousSecretUntil != nil ||
			!slices.Equal(w.Events, []string{tokenvault.EventTokenCreated, tokenvault.EventTokenDeleted}) {
			t.Errorf("created %+v", w)
		}
		secrets := []string{w.Secret}

		got, err := e.V.GetWebhook(ctx, e.Mgmt, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := *w
		want.Secret = ""
		if got.Secret != "" || got.ID != want.ID || got.Name != want.Name || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("GetWebhook = %+v, want %+v", got, want)
		}

		e.Clock.Advance(tokenvault.DefaultWebhookSecretOverlap / 24)
		up, err := e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, tokenvault.WebhookRequest{Name: "all", URL: "https://other.example.com/hook",
			Events: []string{"*", tokenvault.EventTokenRead}, Status: tokenvault.WebhookDisabled})
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "all" || up.URL != "https://other.example.com/hook" || up.Status != tokenvault.WebhookDisabled ||
			up.NotifyEmail != "" || up.Secret != "" || up.ModifiedAt == nil || !up.ModifiedAt.Equal(e.Clock.Now()) ||
			up.ModifiedBy != e.Boot.Application.ID || !slices.Equal(up.Events, []string{"*", tokenvault.EventTokenRead}) {
			t.Errorf("updated %+v", up)
		}

		rot, err := e.V.RotateWebhookSecret(ctx, e.Mgmt, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkSecret(t, rot.Secret)
		if rot.Secret == w.Secret || rot.PreviousSecretUntil == nil ||
			!rot.PreviousSecretUntil.Equal(e.Clock.Now().Add(tokenvault.DefaultWebhookSecretOverlap)) {
			t.Errorf("rotated %+v", rot)
		}
		secrets = append(secrets, rot.Secret)
		if got, err := e.V.GetWebhook(ctx, e.Mgmt, w.ID); err != nil || got.Secret != "" || got.PreviousSecretUntil == nil {
			t.Errorf("GetWebhook after rotation = %+v, %v", got, err)
		}
		e.Clock.Advance(tokenvault.DefaultWebhookSecretOverlap)
		if got, err := e.V.GetWebhook(ctx, e.Mgmt, w.ID); err != nil || got.PreviousSecretUntil != nil {
			t.Errorf("GetWebhook after the overlap = %+v, %v", got, err)
		}
		page, err := e.V.ListWebhooks(ctx, e.Mgmt, tokenvault.ListWebhooksRequest{})
		if err != nil || len(page.Data) != 1 || page.Data[0].Secret != "" || page.Data[0].Name != "all" {
			t.Fatalf("ListWebhooks = %+v, %v", page, err)
		}

		if err := e.V.DeleteWebhook(ctx, e.Mgmt, w.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.V.GetWebhook(ctx, e.Mgmt, w.ID)
		vaulttest.WantKind(t, "GetWebhook after delete", err, tokenvault.NotFound)
		vaulttest.WantKind(t, "DeleteWebhook twice", e.V.DeleteWebhook(ctx, e.Mgmt, w.ID), tokenvault.NotFound)
		_, err = e.V.RotateWebhookSecret(ctx, e.Mgmt, w.ID)
		vaulttest.WantKind(t, "RotateWebhookSecret after delete", err, tokenvault.NotFound)

		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityWebhook, EntityID: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, l := range logs.Data {
			ops = append(ops, l.Operation)
			for _, s := range secrets {
				if strings.Contains(l.Message, s) || strings.Contains(l.Message, strings.TrimPrefix(s, "whsec_")) {
					t.Errorf("log line %q holds a secret", l.Message)
				}
			}
		}
		slices.Sort(ops)
		// create, 3 reads (not the one that found nothing), update,
		// rotate (an update), delete.
		wantOps := []string{tokenvault.OpCreate, tokenvault.OpDelete, tokenvault.OpRead, tokenvault.OpRead, tokenvault.OpRead,
			tokenvault.OpUpdate, tokenvault.OpUpdate}
		slices.Sort(wantOps)
		if !slices.Equal(ops, wantOps) {
			t.Errorf("log operations %v, want %v", ops, wantOps)
		}
	})
}

// TestWebhookListPages: the list pages by offset and by cursor, in id
// order, each webhook once; a bad page request is Invalid.
func TestWebhookListPages(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("h"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
		e.Clock.Advance(1)
	}
	slices.Sort(ids)
	var walked []string
	req := tokenvault.ListWebhooksRequest{PageRequest: tokenvault.PageRequest{Size: 2}}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the cursor walk does not end")
		}
		page, err := e.V.ListWebhooks(ctx, e.Mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range page.Data {
			walked = append(walked, w.ID)
		}
		if page.Pagination.After == "" {
			break
		}
		req.Start = page.Pagination.After
	}
	if !slices.Equal(walked, ids) {
		t.Errorf("cursor walk %v, want %v", walked, ids)
	}
	page, err := e.V.ListWebhooks(ctx, e.Mgmt, tokenvault.ListWebhooksRequest{PageRequest: tokenvault.PageRequest{Page: 3, Size: 2}})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != ids[4] || page.Pagination.TotalItems != 5 || page.Pagination.TotalPages != 3 {
		t.Errorf("page 3 of 2 = %+v, %v", page, err)
	}
	for _, bad := range []tokenvault.PageRequest{{Size: tokenvault.MaxPageSize + 1}, {Page: -1}, {Start: "%%%"}} {
		_, err := e.V.ListWebhooks(ctx, e.Mgmt, tokenvault.ListWebhooksRequest{PageRequest: bad})
		vaulttest.WantKind(t, "ListWebhooks with a bad page request", err, tokenvault.Invalid)
	}
}

// TestWebhookValidation: each bad field is Invalid, naming it, and
// nothing is created.
func TestWebhookValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("ok"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*tokenvault.WebhookRequest)
		field string
	}{
		{"no name", func(r *tokenvault.WebhookRequest) { r.Name = " " }, "name"},
		{"long name", func(r *tokenvault.WebhookRequest) { r.Name = strings.Repeat("n", 201) }, "name"},
		{"no url", func(r *tokenvault.WebhookRequest) { r.URL = "" }, "url"},
		{"relative url", func(r *tokenvault.WebhookRequest) { r.URL = "/in" }, "url"},
		{"ftp url", func(r *tokenvault.WebhookRequest) { r.URL = "ftp://hooks.example.com/in" }, "url"},
		{"userinfo", func(r *tokenvault.WebhookRequest) { r.URL = "https://user:pw@hooks.example.com/in" }, "url"},
		{"fragment", func(r *tokenvault.WebhookRequest) { r.URL = "https://hooks.example.com/in#x" }, "url"},
		{"bad port", func(r *tokenvault.WebhookRequest) { r.URL = "https://hooks.example.com:70000/in" }, "url"},
		{"long url", func(r *tokenvault.WebhookRequest) { r.URL = "https://hooks.example.com/" + strings.Repeat("a", 2048) }, "url"},
		{"no events", func(r *tokenvault.WebhookRequest) { r.Events = nil }, "events"},
		{"empty events", func(r *tokenvault.WebhookRequest) { r.Events = []string{} }, "events"},
		{"unknown event", func(r *tokenvault.WebhookRequest) { r.Events = []string{"token.created", "token.exploded"} }, "events[1]"},
		{"event twice", func(r *tokenvault.WebhookRequest) { r.Events = []string{"token.created", "token.created"} }, "events[1]"},
		{"star twice", func(r *tokenvault.WebhookRequest) { r.Events = []string{"*", "*"} }, "events[1]"},
		{"bad status", func(r *tokenvault.WebhookRequest) { r.Status = "paused" }, "status"},
		{"bad email", func(r *tokenvault.WebhookRequest) { r.NotifyEmail = "Ops <ops@example.com>" }, "notify_email"},
		{"not an email", func(r *tokenvault.WebhookRequest) { r.NotifyEmail = "ops" }, "notify_email"},
	} {
		req := hookRequest("x")
		tc.edit(&req)
		_, err := e.V.CreateWebhook(ctx, e.Mgmt, req)
		wantHookField(t, "CreateWebhook "+tc.name, err, tc.field)
		_, err = e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req)
		wantHookField(t, "UpdateWebhook "+tc.name, err, tc.field)
	}
	page, err := e.V.ListWebhooks(ctx, e.Mgmt, tokenvault.ListWebhooksRequest{})
	if err != nil || len(page.Data) != 1 || page.Data[0].Name != "ok" {
		t.Errorf("after refused requests: %+v, %v", page, err)
	}
	_, err = e.V.GetWebhook(ctx, e.Mgmt, "not-an-id")
	vaulttest.WantKind(t, "GetWebhook of a malformed id", err, tokenvault.NotFound)
}

// wantHookField fails unless err is Invalid naming field.
func wantHookField(t *testing.T, what string, err error, field string) {
	t.Helper()
	e, ok := err.(*tokenvault.Error)
	if !ok || e.Kind != tokenvault.Invalid || len(e.Fields[field]) == 0 {
		t.Errorf("%s = %v, want Invalid naming %s", what, err, field)
	}
}

// ssrfSpellings are URLs whose hosts are this machine, a private
// network, a cloud metadata service or otherwise not the public internet,
// spelt every way a resolver or dialler reads them so.
var ssrfSpellings = []string{
	"https://127.0.0.1/in",
	"https://127.0.0.1./in",
	"https://127.1/in",
	"https://2130706433/in",
	"https://0x7f000001/in",
	"https://0x7f.0.0.1/in",
	"https://0177.0.0.1/in",
	"https://[::1]/in",
	"https://[::ffff:127.0.0.1]/in",
	"https://[::ffff:7f00:1]/in",
	"https://[::127.0.0.1]/in",
	"https://[64:ff9b::7f00:1]/in",
	"https://[2002:7f00:1::]/in",
	"https://localhost/in",
	"https://localhost./in",
	"https://LOCALHOST:8443/in",
	"https://0.0.0.0/in",
	"https://[::]/in",
	"https://10.0.0.1/in",
	"https://10.255.255.255:443/in",
	"https://172.16.0.1/in",
	"https://192.168.1.1/in",
	"https://169.254.169.254/latest/meta-data/",
	"https://[fe80::1%25eth0]/in",
	"https://[fd00:ec2::254]/in",
	"https://100.64.0.1/in",
	"https://100.127.255.254/in",
	"https://198.18.0.1/in",
	"https://224.0.0.1/in",
	"https://255.255.255.255/in",
}

// TestWebhookSSRFSpellings: where private destinations are not allowed,
// every spelling of a host that is not on the public internet is refused
// at creation and at update, naming url; so is http; public hosts, named
// or literal, are accepted.
func TestWebhookSSRFSpellings(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	ctx := context.Background()
	w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("ok"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range append(ssrfSpellings, "http://hooks.example.com/in") {
		req := hookRequest("x")
		req.URL = u
		_, err := e.V.CreateWebhook(ctx, e.Mgmt, req)
		wantHookField(t, "CreateWebhook "+u, err, "url")
		_, err = e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req)
		wantHookField(t, "UpdateWebhook "+u, err, "url")
	}
	for _, u := range []string{"https://8.8.8.8/in", "https://[2606:4700:4700::1111]:8443/in", "https://hooks.example.com./in", "https://a-1.example.io/x?y=1"} {
		req := hookRequest("public")
		req.URL = u
		if _, err := e.V.UpdateWebhook(ctx, e.Mgmt, w.ID, req); err != nil {
			t.Errorf("UpdateWebhook %s: %v", u, err)
		}
	}
}

// TestWebhookPrivateDestinationsAllowed: a Vault that allows private
// destinations takes loopback receivers, over http too.
func TestWebhookPrivateDestinationsAllowed(t *testing.T) {
	e := vaulttest.NewEnv(t) // AllowPrivateDestinations
	for _, u := range []string{"http://127.0.0.1:8080/in", "https://localhost/in", "http://[::1]:9/in"} {
		req := hookRequest("local")
		req.URL = u
		if _, err := e.V.CreateWebhook(context.Background(), e.Mgmt, req); err != nil {
			t.Errorf("CreateWebhook %s: %v", u, err)
		}
	}
}

// TestWebhookLimitPerTenant: a tenant at Options.Webhooks.MaxPerTenant
// webhooks is refused one more (Conflict) until it deletes one; another
// tenant's count is its own.
func TestWebhookLimitPerTenant(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Webhooks.MaxPerTenant = 3 })
	ctx := context.Background()
	var first string
	for i := range 3 {
		w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("h"))
		if err != nil {
			t.Fatalf("webhook %d: %v", i+1, err)
		}
		if first == "" {
			first = w.ID
		}
	}
	_, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("one too many"))
	vaulttest.WantKind(t, "the 4th webhook", err, tokenvault.Conflict)
	if !strings.Contains(err.Error(), "3 webhooks") {
		t.Errorf("the refusal %q does not name the limit", err)
	}
	other := e.Tenant(t, "Other")
	if _, err := e.V.CreateWebhook(ctx, other.Application.Key, hookRequest("theirs")); err != nil {
		t.Errorf("another tenant's first webhook: %v", err)
	}
	if err := e.V.DeleteWebhook(ctx, e.Mgmt, first); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("again")); err != nil {
		t.Errorf("after a deletion: %v", err)
	}
}

// TestWebhookDefaultLimit: without the option, a tenant has at most
// DefaultMaxWebhooksPerTenant webhooks.
func TestWebhookDefaultLimit(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	for i := range tokenvault.DefaultMaxWebhooksPerTenant {
		if _, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("h")); err != nil {
			t.Fatalf("webhook %d: %v", i+1, err)
		}
	}
	_, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("h"))
	vaulttest.WantKind(t, "one past the default limit", err, tokenvault.Conflict)
}

// TestWebhookTenantIsolation: another tenant's key finds none of a
// tenant's webhooks, by any method.
func TestWebhookTenantIsolation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("mine"))
	if err != nil {
		t.Fatal(err)
	}
	other := e.Tenant(t, "Other").Application.Key
	_, err = e.V.GetWebhook(ctx, other, w.ID)
	vaulttest.WantKind(t, "GetWebhook by another tenant", err, tokenvault.NotFound)
	_, err = e.V.UpdateWebhook(ctx, other, w.ID, hookRequest("theirs"))
	vaulttest.WantKind(t, "UpdateWebhook by another tenant", err, tokenvault.NotFound)
	_, err = e.V.RotateWebhookSecret(ctx, other, w.ID)
	vaulttest.WantKind(t, "RotateWebhookSecret by another tenant", err, tokenvault.NotFound)
	vaulttest.WantKind(t, "DeleteWebhook by another tenant", e.V.DeleteWebhook(ctx, other, w.ID), tokenvault.NotFound)
	page, err := e.V.ListWebhooks(ctx, other, tokenvault.ListWebhooksRequest{})
	if err != nil || len(page.Data) != 0 || page.Pagination.TotalItems != 0 {
		t.Errorf("another tenant's list = %+v, %v", page, err)
	}
	if got, err := e.V.GetWebhook(ctx, e.Mgmt, w.ID); err != nil || got.Name != "mine" {
		t.Errorf("the owner's webhook after the other tenant's attempts: %+v, %v", got, err)
	}
}

// TestWebhookPermissions: each method needs its webhook permission, which
// only management applications may hold.
func TestWebhookPermissions(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	w, err := e.V.CreateWebhook(ctx, e.Mgmt, hookRequest("h"))
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, p := range tokenvault.PermissionsFor(tokenvault.Management) {
		if !strings.HasPrefix(p, "webhook:") {
			others = append(others, p)
		}
	}
	none := e.App(t, tokenvault.Management, others...).Key
	_, err = e.V.CreateWebhook(ctx, none, hookRequest("x"))
	vaulttest.WantKind(t, "CreateWebhook without webhook:create", err, tokenvault.PermissionDenied)
	_, err = e.V.GetWebhook(ctx, none, w.ID)
	vaulttest.WantKind(t, "GetWebhook without webhook:read", err, tokenvault.PermissionDenied)
	_, err = e.V.ListWebhooks(ctx, none, tokenvault.ListWebhooksRequest{})
	vaulttest.WantKind(t, "ListWebhooks without webhook:read", err, tokenvault.PermissionDenied)
	_, err = e.V.ListWebhookEventTypes(ctx, none)
	vaulttest.WantKind(t, "ListWebhookEventTypes without webhook:read", err, tokenvault.PermissionDenied)
	_, err = e.V.UpdateWebhook(ctx, none, w.ID, hookRequest("x"))
	vaulttest.WantKind(t, "UpdateWebhook without webhook:update", err, tokenvault.PermissionDenied)
	_, err = e.V.RotateWebhookSecret(ctx, none, w.ID)
	vaulttest.WantKind(t, "RotateWebhookSecret without webhook:update", err, tokenvault.PermissionDenied)
	vaulttest.WantKind(t, "DeleteWebhook without webhook:delete", e.V.DeleteWebhook(ctx, none, w.ID), tokenvault.PermissionDenied)

	reader := e.App(t, tokenvault.Management, tokenvault.PermWebhookRead).Key
	if _, err := e.V.GetWebhook(ctx, reader, w.ID); err != nil {
		t.Errorf("GetWebhook with webhook:read: %v", err)
	}
	_, err = e.V.UpdateWebhook(ctx, reader, w.ID, hookRequest("x"))
	vaulttest.WantKind(t, "UpdateWebhook with webhook:read only", err, tokenvault.PermissionDenied)

	for _, typ := range []tokenvault.ApplicationType{tokenvault.Private, tokenvault.Public} {
		for _, p := range []string{tokenvault.PermWebhookCreate, tokenvault.PermWebhookRead, tokenvault.PermWebhookUpdate, tokenvault.PermWebhookDelete} {
			_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "x", Type: typ, Permissions: []string{p}})
			vaulttest.WantKind(t, "a "+string(typ)+" application given "+p, err, tokenvault.Invalid)
		}
	}
	if !slices.Contains(tokenvault.PermissionsFor(tokenvault.Management), tokenvault.PermWebhookCreate) {
		t.Error("management applications cannot hold webhook:create")
	}
}

// TestWebhookEventTypeNames: the names answered are the catalogue's, in
// its order.
func TestWebhookEventTypeNames(t *testing.T) {
	e := vaulttest.NewEnv(t)
	names, err := e.V.ListWebhookEventTypes(context.Background(), e.Mgmt)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, et := range tokenvault.WebhookEventTypes() {
		want = append(want, et.Name)
	}
	if !slices.Equal(names, want) || !slices.Contains(names, tokenvault.EventWebhookTest) {
		t.Errorf("event types %v, want %v", names, want)
	}
}
