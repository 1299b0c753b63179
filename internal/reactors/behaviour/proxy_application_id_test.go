package reactors_test

import (
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestProxyApplicationID: a proxy's application is answered both as
// application {id} and as application_id (the spec's field), on every
// read; either may be sent, both only when they agree.
func TestProxyApplicationID(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a1 := e.App(t, tokenvault.Private, "token:use")
	a2 := e.App(t, tokenvault.Public, "token:create")
	wantApp := func(what string, p *tokenvault.Proxy, id string) {
		t.Helper()
		if p.ApplicationID != id || (id == "") != (p.Application == nil) || p.Application != nil && p.Application.ID != id {
			t.Errorf("%s: application %+v, application_id %q, want %q", what, p.Application, p.ApplicationID, id)
		}
	}
	p, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com", ApplicationID: a1.ID})
	if err != nil {
		t.Fatalf("CreateProxy(application_id): %v", err)
	}
	wantApp("CreateProxy(application_id)", p, a1.ID)
	got, err := e.V.GetProxy(ctx, e.Mgmt, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantApp("GetProxy", got, a1.ID)
	list, err := e.V.ListProxies(ctx, e.Mgmt, tokenvault.ListProxiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantApp("ListProxies", &list.Data[0], a1.ID)

	_, err = e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com",
		Application: &tokenvault.Ref{ID: a1.ID}, ApplicationID: a2.ID})
	vaulttest.WantField(t, err, "application_id")
	_, err = e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com", ApplicationID: e.Boot.Application.ID})
	vaulttest.WantField(t, err, "application_id") // a management application
	both, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com",
		Application: &tokenvault.Ref{ID: a1.ID}, ApplicationID: a1.ID})
	if err != nil {
		t.Fatalf("CreateProxy(both, agreeing): %v", err)
	}
	wantApp("CreateProxy(both)", both, a1.ID)

	up, err := e.V.UpdateProxy(ctx, e.Mgmt, p.ID, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com", ApplicationID: a2.ID})
	if err != nil {
		t.Fatalf("UpdateProxy(application_id): %v", err)
	}
	wantApp("UpdateProxy(application_id)", up, a2.ID)
	_, err = e.V.UpdateProxy(ctx, e.Mgmt, p.ID, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com",
		Application: &tokenvault.Ref{ID: a2.ID}, ApplicationID: a1.ID})
	vaulttest.WantField(t, err, "application_id")

	for _, tc := range []struct{ patch, want string }{
		{`{"application_id": "` + a1.ID + `"}`, a1.ID},
		{`{"application": {"id": "` + a2.ID + `"}}`, a2.ID},
		{`{"application_id": null}`, ""},
		{`{"application": {"id": "` + a1.ID + `"}, "application_id": "` + a1.ID + `"}`, a1.ID},
		{`{"application": null}`, ""},
	} {
		if err := e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(tc.patch)); err != nil {
			t.Fatalf("PatchProxy(%s): %v", tc.patch, err)
		}
		got, err := e.V.GetProxy(ctx, e.Mgmt, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantApp("PatchProxy("+tc.patch+")", got, tc.want)
	}
	err = e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"application": {"id": "`+a1.ID+`"}, "application_id": "`+a2.ID+`"}`))
	vaulttest.WantField(t, err, "application_id")
	got, _ = e.V.GetProxy(ctx, e.Mgmt, p.ID)
	wantApp("after a refused patch", got, "")
}
