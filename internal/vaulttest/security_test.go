package vaulttest_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/syncbuf"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

func TestKeysOfOneKindDoNotWorkAsAnother(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	user := e.User(t)
	_, err := e.V.ListPermissions(ctx, tokenvault.Credential(p.Key), "")
	vaulttest.WantKind(t, "a proxy key as an API key", err, tokenvault.Unauthenticated)
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(string(user), user, "", `{}`))
	vaulttest.WantKind(t, "an API key as a proxy key", err, tokenvault.Unauthenticated)
	s := e.Session(t)
	_, err = e.V.ListPermissions(ctx, tokenvault.Credential(s.Nonce), "")
	vaulttest.WantKind(t, "a nonce as an API key", err, tokenvault.Unauthenticated)
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(string(s.SessionKey), user, "", `{}`))
	vaulttest.WantKind(t, "a session key as a proxy key", err, tokenvault.Unauthenticated)
}

// TestSandboxContainsHostileCode runs hostile reactor code; each attempt is
// refused or stopped, and the next invocation works. The code timeout is
// seconds long: the invocation after a stopped one waits for a new worker
// process, which on a busy machine took longer than the 300 ms this test
// once allowed.
func TestSandboxContainsHostileCode(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.Timeout = 3 * time.Second })
	other := e.Tenant(t, "Other")
	otherApp, _ := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "o", Type: tokenvault.Private, Permissions: []string{"token:create"}})
	otherTok, err := e.V.CreateToken(ctx, otherApp.Key, tokenvault.TokenRequest{Type: "token", Data: "other-tenant-secret"})
	if err != nil {
		t.Fatal(err)
	}
	app := e.Reader(t, "reveal", "token:read", "token:create")
	user := e.User(t)
	hostile := map[string]string{
		"infinite loop":        `module.exports = () => { for (;;) {} }`,
		"deep recursion":       `module.exports = function f(n) { return f(n + 1) }`,
		"memory bomb":          `module.exports = () => { let s = "x"; for (;;) { s = s + s } }`,
		"require fs":           `module.exports = () => require("fs").readFileSync("/etc/passwd", "utf8")`,
		"require child_proc":   `module.exports = () => require("child_process").execSync("id")`,
		"process.exit":         `module.exports = () => process.exit(1)`,
		"other tenant's token": `module.exports = async (req) => (await req.client.getToken("` + otherTok.ID + `")).data`,
		"other tenant's detok": `module.exports = async (req) => req.client.detokenize({x: "{{` + otherTok.ID + `}}"})`,
	}
	for name, code := range hostile {
		r, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: name, Code: code, Application: &tokenvault.Ref{ID: app.ID}})
		if err != nil {
			t.Fatalf("%s: CreateReactor: %v", name, err)
		}
		start := time.Now()
		out, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{})
		if err == nil {
			t.Errorf("%s: succeeded with %+v", name, out)
		}
		if tokenvault.ErrorKind(err) == tokenvault.Internal {
			t.Errorf("%s: internal error %v", name, err)
		}
		if strings.Contains(err.Error(), "other-tenant-secret") || strings.Contains(err.Error(), "root:") {
			t.Errorf("%s: error leaks data: %v", name, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		healthy, _ := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "ok", Code: vaulttest.EchoCode})
		if _, err := e.V.InvokeReactor(ctx, user, healthy.ID, tokenvault.InvokeReactorRequest{}); err != nil {
			t.Fatalf("after %s: %v", name, err)
		}
	}

	// Prototype pollution does not reach the next invocation or the host.
	polluter, _ := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "p", Code: `module.exports = () => {
		Object.prototype.polluted = "yes"; Array.prototype.map = () => "hijacked"; JSON.stringify = () => "{}";
		return {raw: 1} }`})
	if _, err := e.V.InvokeReactor(ctx, user, polluter.ID, tokenvault.InvokeReactorRequest{}); err != nil {
		t.Fatal(err)
	}
	probe, _ := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "probe", Code: `module.exports = () => ({raw: [({}).polluted === undefined, [1].map(x => x + 1)[0]]})`})
	out, err := e.V.InvokeReactor(ctx, user, probe.ID, tokenvault.InvokeReactorRequest{})
	if err != nil || vaulttest.RoundTrip(t, out.Raw).([]any)[0] != true || vaulttest.RoundTrip(t, out.Raw).([]any)[1] != 2.0 {
		t.Errorf("after pollution: %+v, %v", out, err)
	}
}

// syncBuffer collects a server's output from its goroutines.
type syncBuffer = syncbuf.Buffer

// TestSecretsNeverLeak runs a full scenario over HTTP with debug logging
// captured, including failures, and greps every log line and response body
// for secrets: card number, token plaintext, API keys, session keys and the
// master key. The audit events exported to every kind of sink (file,
// syslog, HTTP) are searched too.
func TestSecretsNeverLeak(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	master := vaulttest.NewMasterKey()
	audit := vaulttest.NewAuditReceivers(t)
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:     memory.New(),
		Logger:    logger,
		Mailer:    &testfake.Mailer{},
		Keys:      tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		// The reactor below prints a length, no secret: its line proves debug output is captured.
		Code:        tokenvault.CodeOptions{LogConsole: true},
		Outbound:    tokenvault.OutboundOptions{AllowPrivateDestinations: true},
		AuditExport: tokenvault.AuditExportOptions{Sinks: audit.Sinks, Interval: 50 * time.Millisecond, Backoff: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := httptest.NewServer(http.StripPrefix("/vault", httpapi.New(v, httpapi.Options{Logger: logger})))
	defer srv.Close()
	boot, _ := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	var bodies bytes.Buffer
	call := func(method, path, key, body string) string {
		req, _ := http.NewRequest(method, srv.URL+"/vault"+path, strings.NewReader(body))
		req.Header.Set("SVC-API-KEY", key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		bodies.Write(b.Bytes())
		return b.String()
	}
	keyOf := func(body string) string {
		var a struct{ Key string }
		json.Unmarshal([]byte(body), &a)
		return a.Key
	}
	const card, plain = "4000056655665556", "plaintext-ssn-078-05-1120"
	priv := keyOf(call("POST", "/applications", string(boot.Application.Key), `{"name":"p","type":"private","rules":[{"priority":1,"container":"/","transform":"reveal","permissions":["token:create","token:read","token:use"]}]}`))
	pub := keyOf(call("POST", "/applications", string(boot.Application.Key), `{"name":"w","type":"public","permissions":["token:create"]}`))
	created := call("POST", "/tokenize", pub, `{"c": {"type":"card","data":{"number":"`+card+`","expiration_month":7,"expiration_year":2031,"cvc":"987"}}, "s": "`+plain+`"}`)
	var ids struct {
		C struct{ ID string }
		S string
	}
	json.Unmarshal([]byte(created), &ids)
	// Bodies that carry plaintext on purpose are not collected: a reveal
	// is the service working. Everything else is.
	bodies.Reset()
	sess := call("POST", "/sessions", pub, ``)
	var s struct {
		SessionKey string `json:"session_key"`
		Nonce      string
	}
	json.Unmarshal([]byte(sess), &s)
	bodies.Reset()
	// Failures of every kind, with the secrets in the requests.
	call("POST", "/tokenize", pub, `{"c": {"type":"card","data":{"number":"`+card[:15]+`7","expiration_month":7,"expiration_year":2031}}}`)
	call("POST", "/tokenize", pub, `{"bad json `+plain)
	call("POST", "/detokenize", priv, `{"x": "{{nope}} `+plain+`"}`)
	call("POST", "/reactors", string(boot.Application.Key), `{"name":"r","code":"module.exports = function ( { `+card+`"}`)
	r := call("POST", "/reactors", string(boot.Application.Key), `{"name":"r","code":"module.exports = async (req) => { console.log('arg', req.args.n.length); throw new Error('failed') }"}`)
	var re struct{ ID string }
	json.Unmarshal([]byte(r), &re)
	call("POST", "/reactors/"+re.ID+"/react", priv, `{"args": {"n": "{{`+ids.C.ID+` | json: '$.number'}}"}}`)
	call("GET", "/tokens/"+ids.S, s.SessionKey, ``)
	call("GET", "/applications", priv, ``)
	call("GET", "/applications", pub+"x", ``)
	call("POST", "/sessions/authorize", priv, `{"nonce": "`+s.Nonce+`x", "permissions": ["token:read"]}`)
	call("PATCH", "/tokens/"+ids.S, priv, `{"data": "`+plain+`"}`)

	vaulttest.WaitExported(t, v)
	haystack := logs.String() + bodies.String() + audit.Output(t)
	for name, secret := range map[string]string{
		"card number": card, "card number (last 12)": card[4:], "token plaintext": plain, "cvc": `"987"`,
		"private key": priv, "public key": pub, "management key": string(boot.Application.Key),
		"session key": s.SessionKey, "nonce": s.Nonce, "master key": hex.EncodeToString(master), "master key bytes": string(master),
	} {
		if secret != "" && strings.Contains(haystack, secret) {
			t.Errorf("the %s appears in logs, error bodies or exported audit events", name)
		}
	}
	if !strings.Contains(logs.String(), "level=DEBUG") {
		t.Error("no debug output was captured: the test proves nothing")
	}
}

// TestEngineErrorsDoNotQuoteData: an error the JavaScript engine raises in
// tenant code quotes the value it failed on ("Cannot read property
// '4111111111111111' of undefined"); detokenized into a reactor's
// arguments or a proxy's body, that is data the caller may not read, so
// the engine's message is withheld from the answer. Errors the code throws
// itself, and the host's own, keep their messages.
func TestEngineErrorsDoNotQuoteData(t *testing.T) {
	e := vaulttest.NewEnv(t)
	admin := e.Reader(t, "reveal", "token:create", "token:read")
	card, err := e.V.CreateToken(ctx, admin.Key, tokenvault.TokenRequest{Type: "token", Data: vaulttest.Visa})
	if err != nil {
		t.Fatal(err)
	}
	userApp := e.Reader(t, "reveal", "token:use") // may use the token, not read it
	user := userApp.Key
	for _, code := range []string{
		`module.exports = async (req) => null[req.args.n]`,
		`module.exports = async (req) => { const n = req.args.n; n() }`,
		`module.exports = async (req) => JSON.parse("{" + req.args.n)`,
	} {
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: code})
		_, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"n": "{{ " + card.ID + " }}"}})
		if tokenvault.ErrorKind(err) != tokenvault.CodeFailed || strings.Contains(fmt.Sprint(err), vaulttest.Visa) || strings.Contains(fmt.Sprint(err), vaulttest.Visa[:8]) {
			t.Errorf("%s: %v; want CodeFailed without the card", code, err)
		}
	}
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async () => { throw new Error("declined: 42") }`})
	if _, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{}); !strings.Contains(fmt.Sprint(err), "declined: 42") {
		t.Errorf("the code's own message = %v, want it kept", err)
	}
	px := e.Proxy(t, tokenvault.ProxyRequest{Name: "p", DestinationURL: vaulttest.NewDestination(t).Srv.URL, RequireAuth: new(false),
		Application:      &tokenvault.Ref{ID: userApp.ID},
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => null[req.args.body.c]`}})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(px.Key, "", "", `{"c": "{{ `+card.ID+` }}"}`))
	if tokenvault.ErrorKind(err) != tokenvault.CodeFailed || strings.Contains(fmt.Sprint(err), vaulttest.Visa[:8]) {
		t.Errorf("a failing transform: %v; want CodeFailed without the card", err)
	}
}
