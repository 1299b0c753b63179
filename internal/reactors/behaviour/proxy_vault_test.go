package reactors_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

func TestProxyCRUD(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	bad := []struct {
		req   tokenvault.ProxyRequest
		field string
	}{
		{tokenvault.ProxyRequest{DestinationURL: d.Srv.URL}, "name"},
		{tokenvault.ProxyRequest{Name: "p"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "ftp://example.com"}, "destination_url"},
		// Detokenized data does not cross a network in the clear.
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "http://example.com/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "http://10.0.0.1/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com:99999/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com:0/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://" + strings.Repeat("a", 254) + "/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "/relative"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: d.Srv.URL, RequestTransform: &tokenvault.ProxyTransform{Code: "module.exports = function ( {"}}, "request_transform.code"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: d.Srv.URL, Application: &tokenvault.Ref{ID: e.Boot.Application.ID}}, "application.id"},
	}
	for _, b := range bad {
		_, err := e.V.CreateProxy(ctx, e.Mgmt, b.req)
		vaulttest.WantField(t, err, b.field)
	}
	// http stays on this machine: every spelling of a loopback host.
	for _, u := range []string{"http://LOCALHOST:1/", "http://localhost./", "http://[::1]:1/", "http://127.0.0.2/", "http://[::ffff:127.0.0.1]/"} {
		if _, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "local", DestinationURL: u}); err != nil {
			t.Errorf("CreateProxy(%s) where private destinations are allowed: %v", u, err)
		}
	}
	p := e.Proxy(t, tokenvault.ProxyRequest{Name: "Payments API", DestinationURL: d.Srv.URL})
	if !p.RequireAuth || !strings.HasPrefix(p.Key, "pxy_") {
		t.Errorf("proxy = %+v, want require_auth by default and a pxy_ key", p)
	}
	page, err := e.V.ListProxies(ctx, e.Mgmt, tokenvault.ListProxiesRequest{Name: "*api"})
	if err != nil || len(page.Data) != 1 {
		t.Errorf("ListProxies = %+v, %v", page, err)
	}
	_, err = e.V.UpdateProxy(ctx, e.Mgmt, p.ID, tokenvault.ProxyRequest{Name: "x"})
	vaulttest.WantField(t, err, "destination_url")
	if err := e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"require_auth": false, "configuration": {"a": 1}}`)); err != nil {
		t.Fatalf("PatchProxy: %v", err)
	}
	got, _ := e.V.GetProxy(ctx, e.Mgmt, p.ID)
	if got.RequireAuth || got.Name != "Payments API" || got.Key != p.Key || got.Configuration["a"] == nil {
		t.Errorf("after patch = %+v", got)
	}
	if err := e.V.DeleteProxy(ctx, e.Mgmt, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, "", "", `{}`))
	vaulttest.WantKind(t, "the key of a deleted proxy", err, tokenvault.Unauthenticated)
}

func TestProxyForwardsAndDetokenizes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	name := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL + "/base"})
	user := e.User(t)

	call := vaulttest.JSONCall(p.Key, user, "/charges/1", `{"card": "{{`+card.ID+`}}", "note": "for {{`+name.ID+`}}", "n": 5}`)
	call.RawQuery = "expand=all"
	call.Header.Set("Authorization", "Bearer dest-secret")
	call.Header.Set("SVC-API-KEY", string(user))
	call.Header.Set("SVC-PROXY-KEY", p.Key)
	call.Header.Set("SVC-PROXY-KEEP-ALIVE", "timeout=5")
	call.Header.Set("Proxy-Authorization", "x")
	res, err := e.V.InvokeProxy(ctx, call)
	if err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.Mu.Lock()
	if d.Method != "POST" || d.Path != "/base/charges/1" || d.Query != "expand=all" {
		t.Errorf("destination got %s %s?%s", d.Method, d.Path, d.Query)
	}
	if d.Header.Get("Authorization") != "Bearer dest-secret" || d.Header.Get("Keep-Alive") != "timeout=5" {
		t.Errorf("forwarded headers = %v", d.Header)
	}
	for _, h := range []string{"Svc-Api-Key", "Svc-Proxy-Key", "Svc-Proxy-Keep-Alive", "Proxy-Authorization"} {
		if d.Header.Get(h) != "" {
			t.Errorf("header %s was forwarded", h)
		}
	}
	var body map[string]any
	json.Unmarshal([]byte(d.Body), &body)
	if c, _ := body["card"].(map[string]any); c["number"] != vaulttest.Visa || body["note"] != "for Ada" || body["n"] != 5.0 {
		t.Errorf("destination body = %s", d.Body)
	}
	d.Mu.Unlock()
	if res.Status != 200 || res.Header.Get("X-Dest") != "yes" || !strings.Contains(string(res.Body), "received") {
		t.Errorf("response = %d %v %s", res.Status, res.Header, res.Body)
	}

	// Forms are detokenized; other content types pass untouched.
	form := tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: user, Method: "PUT", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		Body: []byte("name={{" + name.ID + "}}&x=1")}
	if _, err := e.V.InvokeProxy(ctx, form); err != nil {
		t.Fatal(err)
	}
	d.Mu.Lock()
	if vals, _ := url.ParseQuery(d.Body); vals.Get("name") != "Ada" || vals.Get("x") != "1" || d.Method != "PUT" || d.Path != "/base" {
		t.Errorf("form arrived as %s %s %q", d.Method, d.Path, d.Body)
	}
	d.Mu.Unlock()
	text := tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: user, Method: "POST", Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("{{" + name.ID + "}}")}
	if _, err := e.V.InvokeProxy(ctx, text); err != nil {
		t.Fatal(err)
	}
	d.Mu.Lock()
	if d.Body != "{{"+name.ID+"}}" {
		t.Errorf("text body arrived as %q", d.Body)
	}
	d.Mu.Unlock()
	// Destination errors pass through unchanged.
	res, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, user, "/fail", `{}`))
	if err != nil || res.Status != http.StatusTeapot || string(res.Body) != "destination says no" {
		t.Errorf("destination error = %+v, %v", res, err)
	}
}

// TestProxyKeepsEncodedSlashes: a segment the caller escaped "/" in
// (RawPath) reaches the destination as one segment; a ".." hidden behind
// an encoded "/" is still refused, for destinations that decode "%2F".
func TestProxyKeepsEncodedSlashes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL + "/base", RequireAuth: new(false)})
	call := vaulttest.JSONCall(p.Key, "", "/files/a/b", `{}`)
	call.RawPath = "/files/a%2Fb"
	if _, err := e.V.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.Mu.Lock()
	if d.Raw != "/base/files/a%2Fb" {
		t.Errorf("destination got %s, want /base/files/a%%2Fb", d.Raw)
	}
	d.Mu.Unlock()
	// Without RawPath, or with one that does not match, "/" separates.
	call.RawPath = "/files/other"
	if _, err := e.V.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.Mu.Lock()
	if d.Raw != "/base/files/a/b" {
		t.Errorf("destination got %s, want /base/files/a/b", d.Raw)
	}
	d.Mu.Unlock()
	call = vaulttest.JSONCall(p.Key, "", "/a/../admin", `{}`)
	call.RawPath = "/a%2F..%2Fadmin"
	_, err := e.V.InvokeProxy(ctx, call)
	vaulttest.WantField(t, err, "path")
}

func TestProxyAuthentication(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})

	_, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall("pxy_unknown", e.User(t), "", `{}`))
	vaulttest.WantKind(t, "unknown proxy key", err, tokenvault.Unauthenticated)
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, "", "", `{}`))
	vaulttest.WantKind(t, "require_auth without a key", err, tokenvault.Unauthenticated)
	noUse := e.Reader(t, "reveal", "token:read").Key
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, noUse, "", `{}`))
	vaulttest.WantKind(t, "a key without token:use, nothing detokenized", err, tokenvault.PermissionDenied)
	other := e.Tenant(t, "Other")
	otherUse, _ := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "u", Type: tokenvault.Private, Permissions: []string{"token:use"}})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, otherUse.Key, "", `{}`))
	vaulttest.WantKind(t, "another tenant's key", err, tokenvault.Unauthenticated)
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, e.User(t), "", `{"x": "{{nope}}"}`))
	vaulttest.WantField(t, err, "body.x")

	anon := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, RequireAuth: new(bool)})
	if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(anon.Key, "", "", `{"plain": 1}`)); err != nil {
		t.Errorf("anonymous call without expressions: %v", err)
	}
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(anon.Key, "", "", `{"x": "{{`+tok.ID+`}}"}`))
	vaulttest.WantKind(t, "anonymous detokenization without an application", err, tokenvault.PermissionDenied)

	app := e.Reader(t, "reveal", "token:use")
	withApp := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, RequireAuth: new(bool), Application: &tokenvault.Ref{ID: app.ID}})
	if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(withApp.Key, "", "", `{"x": "{{`+tok.ID+`}}"}`)); err != nil {
		t.Fatalf("anonymous call with the proxy's application: %v", err)
	}
	d.Mu.Lock()
	if d.Body != `{"x":"Ada"}` {
		t.Errorf("destination body = %s", d.Body)
	}
	d.Mu.Unlock()
}

func TestProxyTransforms(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{
		DestinationURL: d.Srv.URL,
		Configuration:  map[string]any{"tag": "t1"},
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async function (req) {
			const h = req.args.headers;
			h["X-Tag"] = req.configuration.tag;
			h["X-Seen"] = req.args.method + " " + req.args.path + " " + req.args.query;
			return {body: Object.assign({}, req.args.body, {added: true}), headers: h};
		}`},
		ResponseTransform: &tokenvault.ProxyTransform{Code: `module.exports = async function (req) {
			return {body: {card: "****" + req.args.body.card.slice(-4)}, headers: {"Content-Type": "application/json", "X-Out": "masked"}};
		}`},
	})
	call := vaulttest.JSONCall(p.Key, e.User(t), "/v1", `{"a": 1}`)
	call.RawQuery = "q=1"
	res, err := e.V.InvokeProxy(ctx, call)
	if err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.Mu.Lock()
	if d.Body != `{"a":1,"added":true}` || d.Header.Get("X-Tag") != "t1" || d.Header.Get("X-Seen") != "POST /v1 ?q=1" {
		t.Errorf("destination got %s %v", d.Body, d.Header)
	}
	d.Mu.Unlock()
	if string(res.Body) != `{"card":"****4242"}` || res.Header.Get("X-Out") != "masked" {
		t.Errorf("response = %s %v", res.Body, res.Header)
	}

	throws := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async () => { throw new BadRequestError("refused by transform") }`}})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(throws.Key, e.User(t), "", `{}`))
	var te *tokenvault.Error
	if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 400 {
		t.Errorf("throwing transform = %v", err)
	}

	// A header the transform makes up that cannot be sent is the code's
	// fault (500 CodeFailed), not an unreachable destination (502).
	badHeader := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => ({body: req.args.body, headers: {"Bad Name": "x"}})`}})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(badHeader.Key, e.User(t), "", `{}`))
	if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 500 || te.Fields["headers.Bad Name"] == nil {
		t.Errorf("transform with an invalid header = %v", err)
	}

	// Either way: a header value that is an object, or that holds a line
	// break, is the code's failure too, naming the header (not written as
	// map[a:1], not turned into spaces).
	for _, tc := range []struct{ which, header, value string }{
		{"request", "X-O", `{a: 1}`},
		{"request", "X-A", `"a\r\nInj: 1"`},
		{"response", "X-O", `{a: 1}`},
		{"response", "X-A", `"a\r\nInj: 1"`},
		{"response", "X-L", `[1, [2]]`},
	} {
		code := &tokenvault.ProxyTransform{Code: `module.exports = async (req) => ({body: req.args.body, headers: {"` + tc.header + `": ` + tc.value + `}})`}
		pr := tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, RequestTransform: code}
		if tc.which == "response" {
			pr = tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, ResponseTransform: code}
		}
		_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(e.Proxy(t, pr).Key, e.User(t), "", `{}`))
		if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 500 || te.Fields["headers."+tc.header] == nil {
			t.Errorf("%s transform with %s: %s = %v, want CodeFailed 500 naming the header", tc.which, tc.header, tc.value, err)
		}
	}

	// Framing and hop-by-hop headers from code are left out: the vault
	// frames what it sends. Scalars are written as text.
	framing := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, ResponseTransform: &tokenvault.ProxyTransform{
		Code: `module.exports = async (req) => ({body: {ok: true}, headers: {"Content-Type": "application/json", "Content-Length": "500", "Transfer-Encoding": "chunked", "Connection": "close", "X-N": 7, "X-B": false, "X-Many": ["a", null, 2], "X-Reset": 1700000000, "X-F": 0.000001, "X-Neg": -0, "X-Null": null}})`}})
	res, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(framing.Key, e.User(t), "", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Content-Length", "Transfer-Encoding", "Connection"} {
		if res.Header.Get(name) != "" {
			t.Errorf("response header %s = %q, want it left out", name, res.Header.Get(name))
		}
	}
	if res.Header.Get("X-N") != "7" || res.Header.Get("X-B") != "false" || !slices.Equal(res.Header.Values("X-Many"), []string{"a", "2"}) ||
		res.Header.Get("X-Reset") != "1700000000" || res.Header.Get("X-F") != "0.000001" || res.Header.Get("X-Neg") != "0" || res.Header.Values("X-Null") != nil {
		t.Errorf("response headers %v, want X-N 7, X-B false, X-Many a and 2, X-Reset 1700000000, X-F 0.000001, X-Neg 0, no X-Null", res.Header)
	}
	// headers that is not an object fails the code too.
	notObject := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, ResponseTransform: &tokenvault.ProxyTransform{
		Code: `module.exports = async (req) => ({body: {ok: true}, headers: "X-A: 1"})`}})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(notObject.Key, e.User(t), "", `{}`))
	if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Fields["headers"] == nil {
		t.Errorf("a transform returning headers that are a string = %v, want CodeFailed naming headers", err)
	}
}

func TestProxyDestinationFailures(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	d.Srv.Close()
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	_, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, e.User(t), "", `{}`))
	vaulttest.WantKind(t, "destination down", err, tokenvault.BadGateway)

	// With the default outbound policy, private destinations are refused:
	// http to loopback when the proxy is saved, any address when it is
	// called (the dial is refused before TLS).
	strict := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	live := vaulttest.NewDestination(t)
	_, err = strict.V.CreateProxy(ctx, strict.Mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: live.Srv.URL})
	vaulttest.WantField(t, err, "destination_url")
	sp := strict.Proxy(t, tokenvault.ProxyRequest{DestinationURL: "https://" + live.Srv.Listener.Addr().String()})
	_, err = strict.V.InvokeProxy(ctx, vaulttest.JSONCall(sp.Key, strict.User(t), "", `{}`))
	vaulttest.WantKind(t, "loopback destination under the default policy", err, tokenvault.BadGateway)
	if !strings.Contains(err.Error(), "private network") {
		t.Errorf("err = %v", err)
	}
}

// TestDeletedApplicationKeepsItsUsersEditable: a proxy and a reactor whose
// application was deleted stay editable by patches that keep it (they
// were refused for "no such application"); naming a missing application
// is still refused; the proxy's invocations fail until it gets another.
func TestDeletedApplicationKeepsItsUsersEditable(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		d := vaulttest.NewDestination(t)
		app := e.Reader(t, "reveal", "token:use")
		noAuth := false
		p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL, Application: &tokenvault.Ref{ID: app.ID}, RequireAuth: &noAuth})
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode, Application: &tokenvault.Ref{ID: app.ID}})
		if err := e.V.DeleteApplication(ctx, e.Mgmt, app.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"name": "renamed"}`)); err != nil {
			t.Errorf("PatchProxy keeping a deleted application: %v", err)
		}
		if err := e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"name": "renamed"}`)); err != nil {
			t.Errorf("PatchReactor keeping a deleted application: %v", err)
		}
		other := e.Reader(t, "reveal", "token:use")
		if err := e.V.DeleteApplication(ctx, e.Mgmt, other.ID); err != nil {
			t.Fatal(err)
		}
		err := e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"application": {"id": "`+other.ID+`"}}`))
		vaulttest.WantField(t, err, "application.id")
		err = e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"application": {"id": "`+other.ID+`"}}`))
		vaulttest.WantField(t, err, "application.id")
		bare := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode})
		_, err = e.V.UpdateReactor(ctx, e.Mgmt, bare.ID, tokenvault.UpdateReactorRequest{Name: "bare", Code: vaulttest.EchoCode, Application: &tokenvault.Ref{}})
		vaulttest.WantField(t, err, "application.id")
		_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, "", "", `{}`))
		vaulttest.WantKind(t, "invoking a proxy whose application was deleted", err, tokenvault.PermissionDenied)
	})
}
