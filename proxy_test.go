package tokenvault_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// destination records the last request it got and answers with a JSON
// echo of it.
type destination struct {
	mu     sync.Mutex
	method string
	path   string
	raw    string // the path as it came, escaped
	query  string
	header http.Header
	body   string
	srv    *httptest.Server
}

func newDestination(t *testing.T) *destination {
	d := &destination{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.method, d.path, d.raw, d.query, d.header, d.body = r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)
		d.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "destination says no")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Dest", "yes")
		json.NewEncoder(w).Encode(map[string]any{"received": string(b), "card": "4242424242424242"})
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (e *env) proxy(t *testing.T, req tokenvault.ProxyRequest) *tokenvault.Proxy {
	t.Helper()
	if req.Name == "" {
		req.Name = "proxy"
	}
	p, err := e.v.CreateProxy(ctx, e.mgmt, req)
	if err != nil {
		t.Fatalf("CreateProxy: %v", err)
	}
	return p
}

func jsonCall(key string, apiKey tokenvault.Credential, path, body string) tokenvault.ProxyCall {
	return tokenvault.ProxyCall{ProxyKey: key, APIKey: apiKey, Method: "POST", Path: path,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

func TestProxyCRUD(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	bad := []struct {
		req   tokenvault.ProxyRequest
		field string
	}{
		{tokenvault.ProxyRequest{DestinationURL: d.srv.URL}, "name"},
		{tokenvault.ProxyRequest{Name: "p"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "ftp://example.com"}, "destination_url"},
		// Detokenized data does not cross a network in the clear.
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "http://example.com/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "http://10.0.0.1/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com:99999/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com:0/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://" + strings.Repeat("a", 254) + "/"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: "/relative"}, "destination_url"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: d.srv.URL, RequestTransform: &tokenvault.ProxyTransform{Code: "module.exports = function ( {"}}, "request_transform.code"},
		{tokenvault.ProxyRequest{Name: "p", DestinationURL: d.srv.URL, Application: &tokenvault.Ref{ID: e.boot.Application.ID}}, "application.id"},
	}
	for _, b := range bad {
		_, err := e.v.CreateProxy(ctx, e.mgmt, b.req)
		wantField(t, err, b.field)
	}
	// http stays on this machine: every spelling of a loopback host.
	for _, u := range []string{"http://LOCALHOST:1/", "http://localhost./", "http://[::1]:1/", "http://127.0.0.2/", "http://[::ffff:127.0.0.1]/"} {
		if _, err := e.v.CreateProxy(ctx, e.mgmt, tokenvault.ProxyRequest{Name: "local", DestinationURL: u}); err != nil {
			t.Errorf("CreateProxy(%s) where private destinations are allowed: %v", u, err)
		}
	}
	p := e.proxy(t, tokenvault.ProxyRequest{Name: "Payments API", DestinationURL: d.srv.URL})
	if !p.RequireAuth || !strings.HasPrefix(p.Key, "pxy_") {
		t.Errorf("proxy = %+v, want require_auth by default and a pxy_ key", p)
	}
	page, err := e.v.ListProxies(ctx, e.mgmt, tokenvault.ListProxiesRequest{Name: "*api"})
	if err != nil || len(page.Data) != 1 {
		t.Errorf("ListProxies = %+v, %v", page, err)
	}
	_, err = e.v.UpdateProxy(ctx, e.mgmt, p.ID, tokenvault.ProxyRequest{Name: "x"})
	wantField(t, err, "destination_url")
	if err := e.v.PatchProxy(ctx, e.mgmt, p.ID, json.RawMessage(`{"require_auth": false, "configuration": {"a": 1}}`)); err != nil {
		t.Fatalf("PatchProxy: %v", err)
	}
	got, _ := e.v.GetProxy(ctx, e.mgmt, p.ID)
	if got.RequireAuth || got.Name != "Payments API" || got.Key != p.Key || got.Configuration["a"] == nil {
		t.Errorf("after patch = %+v", got)
	}
	if err := e.v.DeleteProxy(ctx, e.mgmt, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, "", "", `{}`))
	wantKind(t, "the key of a deleted proxy", err, tokenvault.Unauthenticated)
}

func TestProxyForwardsAndDetokenizes(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	card := e.token(t, cardRequest(visa))
	name := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL + "/base"})
	user := e.user(t)

	call := jsonCall(p.Key, user, "/charges/1", `{"card": "{{`+card.ID+`}}", "note": "for {{`+name.ID+`}}", "n": 5}`)
	call.RawQuery = "expand=all"
	call.Header.Set("Authorization", "Bearer dest-secret")
	call.Header.Set("SVC-API-KEY", string(user))
	call.Header.Set("SVC-PROXY-KEY", p.Key)
	call.Header.Set("SVC-PROXY-KEEP-ALIVE", "timeout=5")
	call.Header.Set("Proxy-Authorization", "x")
	res, err := e.v.InvokeProxy(ctx, call)
	if err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.mu.Lock()
	if d.method != "POST" || d.path != "/base/charges/1" || d.query != "expand=all" {
		t.Errorf("destination got %s %s?%s", d.method, d.path, d.query)
	}
	if d.header.Get("Authorization") != "Bearer dest-secret" || d.header.Get("Keep-Alive") != "timeout=5" {
		t.Errorf("forwarded headers = %v", d.header)
	}
	for _, h := range []string{"Svc-Api-Key", "Svc-Proxy-Key", "Svc-Proxy-Keep-Alive", "Proxy-Authorization"} {
		if d.header.Get(h) != "" {
			t.Errorf("header %s was forwarded", h)
		}
	}
	var body map[string]any
	json.Unmarshal([]byte(d.body), &body)
	if c, _ := body["card"].(map[string]any); c["number"] != visa || body["note"] != "for Ada" || body["n"] != 5.0 {
		t.Errorf("destination body = %s", d.body)
	}
	d.mu.Unlock()
	if res.Status != 200 || res.Header.Get("X-Dest") != "yes" || !strings.Contains(string(res.Body), "received") {
		t.Errorf("response = %d %v %s", res.Status, res.Header, res.Body)
	}

	// Forms are detokenized; other content types pass untouched.
	form := tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: user, Method: "PUT", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		Body: []byte("name={{" + name.ID + "}}&x=1")}
	if _, err := e.v.InvokeProxy(ctx, form); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	if vals, _ := url.ParseQuery(d.body); vals.Get("name") != "Ada" || vals.Get("x") != "1" || d.method != "PUT" || d.path != "/base" {
		t.Errorf("form arrived as %s %s %q", d.method, d.path, d.body)
	}
	d.mu.Unlock()
	text := tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: user, Method: "POST", Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("{{" + name.ID + "}}")}
	if _, err := e.v.InvokeProxy(ctx, text); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	if d.body != "{{"+name.ID+"}}" {
		t.Errorf("text body arrived as %q", d.body)
	}
	d.mu.Unlock()
	// Destination errors pass through unchanged.
	res, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, user, "/fail", `{}`))
	if err != nil || res.Status != http.StatusTeapot || string(res.Body) != "destination says no" {
		t.Errorf("destination error = %+v, %v", res, err)
	}
}

// TestProxyKeepsEncodedSlashes: a segment the caller escaped "/" in
// (RawPath) reaches the destination as one segment; a ".." hidden behind
// an encoded "/" is still refused, for destinations that decode "%2F".
func TestProxyKeepsEncodedSlashes(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL + "/base", RequireAuth: new(false)})
	call := jsonCall(p.Key, "", "/files/a/b", `{}`)
	call.RawPath = "/files/a%2Fb"
	if _, err := e.v.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.mu.Lock()
	if d.raw != "/base/files/a%2Fb" {
		t.Errorf("destination got %s, want /base/files/a%%2Fb", d.raw)
	}
	d.mu.Unlock()
	// Without RawPath, or with one that does not match, "/" separates.
	call.RawPath = "/files/other"
	if _, err := e.v.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.mu.Lock()
	if d.raw != "/base/files/a/b" {
		t.Errorf("destination got %s, want /base/files/a/b", d.raw)
	}
	d.mu.Unlock()
	call = jsonCall(p.Key, "", "/a/../admin", `{}`)
	call.RawPath = "/a%2F..%2Fadmin"
	_, err := e.v.InvokeProxy(ctx, call)
	wantField(t, err, "path")
}

func TestProxyAuthentication(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL})

	_, err := e.v.InvokeProxy(ctx, jsonCall("pxy_unknown", e.user(t), "", `{}`))
	wantKind(t, "unknown proxy key", err, tokenvault.Unauthenticated)
	_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, "", "", `{}`))
	wantKind(t, "require_auth without a key", err, tokenvault.Unauthenticated)
	noUse := e.reader(t, "reveal", "token:read").Key
	_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, noUse, "", `{}`))
	wantKind(t, "a key without token:use, nothing detokenized", err, tokenvault.PermissionDenied)
	other := e.tenant(t, "Other")
	otherUse, _ := e.v.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "u", Type: tokenvault.Private, Permissions: []string{"token:use"}})
	_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, otherUse.Key, "", `{}`))
	wantKind(t, "another tenant's key", err, tokenvault.Unauthenticated)
	_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, e.user(t), "", `{"x": "{{nope}}"}`))
	wantField(t, err, "body.x")

	anon := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL, RequireAuth: new(bool)})
	if _, err := e.v.InvokeProxy(ctx, jsonCall(anon.Key, "", "", `{"plain": 1}`)); err != nil {
		t.Errorf("anonymous call without expressions: %v", err)
	}
	_, err = e.v.InvokeProxy(ctx, jsonCall(anon.Key, "", "", `{"x": "{{`+tok.ID+`}}"}`))
	wantKind(t, "anonymous detokenization without an application", err, tokenvault.PermissionDenied)

	app := e.reader(t, "reveal", "token:use")
	withApp := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL, RequireAuth: new(bool), Application: &tokenvault.Ref{ID: app.ID}})
	if _, err := e.v.InvokeProxy(ctx, jsonCall(withApp.Key, "", "", `{"x": "{{`+tok.ID+`}}"}`)); err != nil {
		t.Fatalf("anonymous call with the proxy's application: %v", err)
	}
	d.mu.Lock()
	if d.body != `{"x":"Ada"}` {
		t.Errorf("destination body = %s", d.body)
	}
	d.mu.Unlock()
}

func TestProxyTransforms(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	p := e.proxy(t, tokenvault.ProxyRequest{
		DestinationURL: d.srv.URL,
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
	call := jsonCall(p.Key, e.user(t), "/v1", `{"a": 1}`)
	call.RawQuery = "q=1"
	res, err := e.v.InvokeProxy(ctx, call)
	if err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.mu.Lock()
	if d.body != `{"a":1,"added":true}` || d.header.Get("X-Tag") != "t1" || d.header.Get("X-Seen") != "POST /v1 ?q=1" {
		t.Errorf("destination got %s %v", d.body, d.header)
	}
	d.mu.Unlock()
	if string(res.Body) != `{"card":"****4242"}` || res.Header.Get("X-Out") != "masked" {
		t.Errorf("response = %s %v", res.Body, res.Header)
	}

	throws := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async () => { throw new BadRequestError("refused by transform") }`}})
	_, err = e.v.InvokeProxy(ctx, jsonCall(throws.Key, e.user(t), "", `{}`))
	var te *tokenvault.Error
	if !asError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 400 {
		t.Errorf("throwing transform = %v", err)
	}

	// A header the transform makes up that cannot be sent is the code's
	// fault (500 CodeFailed), not an unreachable destination (502).
	badHeader := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => ({body: req.args.body, headers: {"Bad Name": "x"}})`}})
	_, err = e.v.InvokeProxy(ctx, jsonCall(badHeader.Key, e.user(t), "", `{}`))
	if !asError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 500 || te.Fields["headers.Bad Name"] == nil {
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
		pr := tokenvault.ProxyRequest{DestinationURL: d.srv.URL, RequestTransform: code}
		if tc.which == "response" {
			pr = tokenvault.ProxyRequest{DestinationURL: d.srv.URL, ResponseTransform: code}
		}
		_, err = e.v.InvokeProxy(ctx, jsonCall(e.proxy(t, pr).Key, e.user(t), "", `{}`))
		if !asError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != 500 || te.Fields["headers."+tc.header] == nil {
			t.Errorf("%s transform with %s: %s = %v, want CodeFailed 500 naming the header", tc.which, tc.header, tc.value, err)
		}
	}

	// Framing and hop-by-hop headers from code are left out: the vault
	// frames what it sends. Scalars are written as text.
	framing := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL, ResponseTransform: &tokenvault.ProxyTransform{
		Code: `module.exports = async (req) => ({body: {ok: true}, headers: {"Content-Type": "application/json", "Content-Length": "500", "Transfer-Encoding": "chunked", "Connection": "close", "X-N": 7, "X-B": false, "X-Many": ["a", null, 2], "X-Reset": 1700000000, "X-F": 0.000001, "X-Neg": -0, "X-Null": null}})`}})
	res, err = e.v.InvokeProxy(ctx, jsonCall(framing.Key, e.user(t), "", `{}`))
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
	notObject := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL, ResponseTransform: &tokenvault.ProxyTransform{
		Code: `module.exports = async (req) => ({body: {ok: true}, headers: "X-A: 1"})`}})
	_, err = e.v.InvokeProxy(ctx, jsonCall(notObject.Key, e.user(t), "", `{}`))
	if !asError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Fields["headers"] == nil {
		t.Errorf("a transform returning headers that are a string = %v, want CodeFailed naming headers", err)
	}
}

func TestProxyDestinationFailures(t *testing.T) {
	e := newEnv(t)
	d := newDestination(t)
	d.srv.Close()
	p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL})
	_, err := e.v.InvokeProxy(ctx, jsonCall(p.Key, e.user(t), "", `{}`))
	wantKind(t, "destination down", err, tokenvault.BadGateway)

	// With the default outbound policy, private destinations are refused:
	// http to loopback when the proxy is saved, any address when it is
	// called (the dial is refused before TLS).
	strict := newEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	live := newDestination(t)
	_, err = strict.v.CreateProxy(ctx, strict.mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: live.srv.URL})
	wantField(t, err, "destination_url")
	sp := strict.proxy(t, tokenvault.ProxyRequest{DestinationURL: "https://" + live.srv.Listener.Addr().String()})
	_, err = strict.v.InvokeProxy(ctx, jsonCall(sp.Key, strict.user(t), "", `{}`))
	wantKind(t, "loopback destination under the default policy", err, tokenvault.BadGateway)
	if !strings.Contains(err.Error(), "private network") {
		t.Errorf("err = %v", err)
	}
}

// TestDeletedApplicationKeepsItsUsersEditable: a proxy and a reactor whose
// application was deleted stay editable by patches that keep it (they
// were refused for "no such application"); naming a missing application
// is still refused; the proxy's invocations fail until it gets another.
func TestDeletedApplicationKeepsItsUsersEditable(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		d := newDestination(t)
		app := e.reader(t, "reveal", "token:use")
		noAuth := false
		p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL, Application: &tokenvault.Ref{ID: app.ID}, RequireAuth: &noAuth})
		r := e.reactor(t, tokenvault.CreateReactorRequest{Code: echoCode, Application: &tokenvault.Ref{ID: app.ID}})
		if err := e.v.DeleteApplication(ctx, e.mgmt, app.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.v.PatchProxy(ctx, e.mgmt, p.ID, json.RawMessage(`{"name": "renamed"}`)); err != nil {
			t.Errorf("PatchProxy keeping a deleted application: %v", err)
		}
		if err := e.v.PatchReactor(ctx, e.mgmt, r.ID, json.RawMessage(`{"name": "renamed"}`)); err != nil {
			t.Errorf("PatchReactor keeping a deleted application: %v", err)
		}
		other := e.reader(t, "reveal", "token:use")
		if err := e.v.DeleteApplication(ctx, e.mgmt, other.ID); err != nil {
			t.Fatal(err)
		}
		err := e.v.PatchProxy(ctx, e.mgmt, p.ID, json.RawMessage(`{"application": {"id": "`+other.ID+`"}}`))
		wantField(t, err, "application.id")
		err = e.v.PatchReactor(ctx, e.mgmt, r.ID, json.RawMessage(`{"application": {"id": "`+other.ID+`"}}`))
		wantField(t, err, "application.id")
		bare := e.reactor(t, tokenvault.CreateReactorRequest{Code: echoCode})
		_, err = e.v.UpdateReactor(ctx, e.mgmt, bare.ID, tokenvault.UpdateReactorRequest{Name: "bare", Code: echoCode, Application: &tokenvault.Ref{}})
		wantField(t, err, "application.id")
		_, err = e.v.InvokeProxy(ctx, jsonCall(p.Key, "", "", `{}`))
		wantKind(t, "invoking a proxy whose application was deleted", err, tokenvault.PermissionDenied)
	})
}
