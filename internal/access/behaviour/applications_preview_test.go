package access_test

import (
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestPreviewAccess: a management key previews what an application's
// grants, or grants being written, allow on a sample token, as a real
// call is decided (a revealing rule on /pci/ reads /pci/high/ in clear, a
// token in /pci/ and /eu/ gets the stricter transform, a refusal says
// why); bad grants are Invalid naming the field; a key without
// application:read is refused; another tenant's application is NotFound.
func TestPreviewAccess(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		rules := []tokenvault.AccessRule{
			{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{"token:read", "token:use"}},
			{Priority: 2, Container: "/", Transform: "mask", Permissions: []string{"token:read"}},
		}
		app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "payments", Type: tokenvault.Private,
			Permissions: []string{"token:create"}, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		byApp, err := e.V.PreviewAccess(ctx, e.Mgmt, tokenvault.AccessPreviewRequest{ApplicationID: app.ID,
			Token: tokenvault.AccessPreviewToken{Type: "card"}})
		if err != nil {
			t.Fatalf("PreviewAccess(application): %v", err)
		}
		if c := byApp.Token.Containers; len(c) != 1 || c[0] != "/pci/high/" {
			t.Errorf("PreviewAccess(card without containers) decided on %v, want the default /pci/high/", c)
		}
		want := map[string]string{"token:create": "mask", "token:read": "reveal", "token:use": "reveal", "token:update": "", "token:delete": "", "token:search": ""}
		if len(byApp.Decisions) != len(want) {
			t.Fatalf("PreviewAccess decisions = %+v, want one per token permission", byApp.Decisions)
		}
		for _, d := range byApp.Decisions {
			if d.Allowed != (want[d.Permission] != "") || d.Transform != want[d.Permission] {
				t.Errorf("PreviewAccess %s = allowed %v %q, want %q", d.Permission, d.Allowed, d.Transform, want[d.Permission])
			}
			c := d.Containers[0]
			switch d.Permission {
			case "token:read":
				if c.Rule == nil || c.Rule.Priority != 1 {
					t.Errorf("PreviewAccess token:read decided by %+v, want the rule of priority 1", c.Rule)
				}
			case "token:create":
				if !c.Direct || c.Rule != nil {
					t.Errorf("PreviewAccess token:create = %+v, want the direct permission", c)
				}
			case "token:delete":
				if c.Reason == "" {
					t.Errorf("PreviewAccess token:delete refused without a reason: %+v", c)
				}
			}
		}

		// The preview of an application is a read of it in the audit log.
		e.SettleChain(t)
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "application", EntityID: app.ID})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(logs.Data, func(l tokenvault.Log) bool { return l.Message == "Application access previewed" }) {
			t.Errorf("the application's log lines %+v hold no preview", logs.Data)
		}

		// Grants being written, on a token in two containers.
		written, err := e.V.PreviewAccess(ctx, e.Mgmt, tokenvault.AccessPreviewRequest{Rules: rules,
			Token: tokenvault.AccessPreviewToken{Containers: []string{"/pci/", "/eu/"}}})
		if err != nil {
			t.Fatalf("PreviewAccess(rules): %v", err)
		}
		if d := written.Decisions[1]; d.Permission != "token:read" || !d.Allowed || d.Transform != "mask" {
			t.Errorf("PreviewAccess token:read on /pci/ and /eu/ = %+v, want mask", d)
		}
		if d := written.Decisions[5]; d.Permission != "token:use" || d.Allowed || d.Containers[0].Allowed == false || d.Containers[1].Reason == "" {
			t.Errorf("PreviewAccess token:use on /pci/ and /eu/ = %+v, want refused on /eu/ with a reason", d)
		}

		for _, tc := range []struct {
			name  string
			req   tokenvault.AccessPreviewRequest
			field string
		}{
			{"both", tokenvault.AccessPreviewRequest{ApplicationID: app.ID, Rules: rules}, "application_id"},
			{"bad rule", tokenvault.AccessPreviewRequest{Rules: []tokenvault.AccessRule{{Priority: 1, Container: "pci", Permissions: []string{"token:read"}}}}, "rules[0].container"},
			{"bad container", tokenvault.AccessPreviewRequest{Permissions: []string{"token:read"}, Token: tokenvault.AccessPreviewToken{Containers: []string{"x"}}}, "token.containers[0]"},
			{"bad type", tokenvault.AccessPreviewRequest{Permissions: []string{"token:read"}, Token: tokenvault.AccessPreviewToken{Type: "iban"}}, "token.type"},
			{"no grants", tokenvault.AccessPreviewRequest{}, "permissions"},
		} {
			_, err := e.V.PreviewAccess(ctx, e.Mgmt, tc.req)
			vaulttest.WantField(t, err, tc.field)
		}

		reader := e.Reader(t, "mask", "token:read")
		_, err = e.V.PreviewAccess(ctx, reader.Key, tokenvault.AccessPreviewRequest{ApplicationID: app.ID})
		vaulttest.WantKind(t, "PreviewAccess(token:read key)", err, tokenvault.PermissionDenied)

		other := e.Tenant(t, "Other")
		_, err = e.V.PreviewAccess(ctx, other.Application.Key, tokenvault.AccessPreviewRequest{ApplicationID: app.ID})
		vaulttest.WantKind(t, "PreviewAccess(another tenant's application)", err, tokenvault.NotFound)
	})
}
