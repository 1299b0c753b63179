package reactors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/webhooks"
)

func TestFormulaCRUD(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		f := e.Formula(t, tokenvault.FormulaRequest{
			Name: "Charge", Description: "charges a card",
			Configuration:     []tokenvault.ConfigurationDeclaration{{Name: "api_key", Type: "string"}},
			RequestParameters: []tokenvault.RequestParameter{{Name: "card.number", Type: "string"}},
		})
		if f.Type != "private" || f.TenantID != e.Boot.Tenant.ID || f.Code != vaulttest.EchoCode {
			t.Errorf("formula = %+v", f)
		}
		_, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "x", Code: "module.exports = function (req) {\n  var x = ;\n}"})
		vaulttest.WantField(t, err, "code")
		if !strings.Contains(err.Error(), "line 2") {
			t.Errorf("syntax error %q does not give line 2", err)
		}
		_, err = e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "x", Code: "module.exports = 42"})
		vaulttest.WantKind(t, "code that exports no function", err, tokenvault.Unprocessable)
		_, err = e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "x", Code: vaulttest.EchoCode, Type: "official"})
		vaulttest.WantField(t, err, "type")
		_, err = e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "x", Code: vaulttest.EchoCode,
			Configuration: []tokenvault.ConfigurationDeclaration{{Name: "a", Type: "date"}}})
		vaulttest.WantField(t, err, "configuration[0].type")

		official, err := e.V.RegisterOfficialFormula(ctx, tokenvault.FormulaRequest{Name: "Official", Code: vaulttest.EchoCode})
		if err != nil || official.Type != "official" {
			t.Fatalf("RegisterOfficialFormula = %+v, %v", official, err)
		}
		other := e.Tenant(t, "Other")
		for _, key := range []tokenvault.Credential{e.Mgmt, other.Application.Key} {
			page, err := e.V.ListFormulas(ctx, key, tokenvault.ListFormulasRequest{})
			if err != nil || len(page.Data) == 0 || page.Data[0].ID != official.ID {
				t.Errorf("ListFormulas = %+v, %v; want the official formula first", page, err)
			}
		}
		_, err = e.V.GetFormula(ctx, other.Application.Key, f.ID)
		vaulttest.WantKind(t, "GetFormula of another tenant", err, tokenvault.NotFound)
		_, err = e.V.UpdateFormula(ctx, e.Mgmt, official.ID, tokenvault.FormulaRequest{Name: "mine", Code: vaulttest.EchoCode})
		vaulttest.WantKind(t, "UpdateFormula(official)", err, tokenvault.PermissionDenied)
		err = e.V.DeleteFormula(ctx, e.Mgmt, official.ID)
		vaulttest.WantKind(t, "DeleteFormula(official)", err, tokenvault.PermissionDenied)

		up, err := e.V.UpdateFormula(ctx, e.Mgmt, f.ID, tokenvault.FormulaRequest{Name: "Charge 2", Code: vaulttest.EchoCode})
		if err != nil || up.Name != "Charge 2" || up.ModifiedAt == nil || len(up.Configuration) != 0 {
			t.Errorf("UpdateFormula = %+v, %v", up, err)
		}
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
		vaulttest.WantKind(t, "DeleteFormula in use", e.V.DeleteFormula(ctx, e.Mgmt, f.ID), tokenvault.Conflict)
		if err := e.V.DeleteReactor(ctx, e.Mgmt, r.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.V.DeleteFormula(ctx, e.Mgmt, f.ID); err != nil {
			t.Fatalf("DeleteFormula: %v", err)
		}
		_, err = e.V.GetFormula(ctx, e.Mgmt, f.ID)
		vaulttest.WantKind(t, "GetFormula after delete", err, tokenvault.NotFound)
	})
}

func TestReactorCRUD(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		f := e.Formula(t, tokenvault.FormulaRequest{Configuration: []tokenvault.ConfigurationDeclaration{
			{Name: "region", Type: "string"}, {Name: "retries", Type: "number"}, {Name: "live", Type: "boolean"},
		}})
		conf := map[string]any{"region": "eu", "retries": 3, "live": true}
		app := e.App(t, tokenvault.Private, "token:create")
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Name: "Payments EU", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf, Application: &tokenvault.Ref{ID: app.ID}})
		if r.Formula == nil || r.Formula.ID != f.ID || r.Application == nil || r.Application.ID != app.ID || r.Configuration["region"] != "eu" {
			t.Errorf("reactor = %+v", r)
		}

		bad := []struct {
			name  string
			req   tokenvault.CreateReactorRequest
			field string
		}{
			{"no name", tokenvault.CreateReactorRequest{Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf}, "name"},
			{"long name", tokenvault.CreateReactorRequest{Name: strings.Repeat("n", 201), Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf}, "name"},
			{"no formula", tokenvault.CreateReactorRequest{Name: "x", Configuration: conf}, "formula.id"},
			{"unknown formula", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: app.ID}, Configuration: conf}, "formula.id"},
			{"no configuration", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}}, "configuration"},
			{"missing name", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{"region": "eu", "live": true}}, "configuration.retries"},
			{"unknown name", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{"region": "eu", "retries": 1, "live": true, "extra": 1}}, "configuration.extra"},
			{"wrong type", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{"region": "eu", "retries": "3", "live": true}}, "configuration.retries"},
			{"management application", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf, Application: &tokenvault.Ref{ID: e.Boot.Application.ID}}, "application.id"},
			{"unknown application", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf, Application: &tokenvault.Ref{ID: f.ID}}, "application.id"},
			{"formula and code", tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: conf, Code: vaulttest.EchoCode}, "code"},
		}
		for _, b := range bad {
			_, err := e.V.CreateReactor(ctx, e.Mgmt, b.req)
			if err == nil {
				t.Fatalf("%s: CreateReactor succeeded", b.name)
			}
			vaulttest.WantField(t, err, b.field)
		}

		own := e.Reactor(t, tokenvault.CreateReactorRequest{Name: "Own code", Code: vaulttest.EchoCode})
		if own.Formula != nil || own.Code != vaulttest.EchoCode {
			t.Errorf("code reactor = %+v", own)
		}
		page, err := e.V.ListReactors(ctx, e.Mgmt, tokenvault.ListReactorsRequest{Name: "pay*"})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != r.ID {
			t.Errorf("ListReactors(name=pay*) = %+v, %v", page, err)
		}
		page, _ = e.V.ListReactors(ctx, e.Mgmt, tokenvault.ListReactorsRequest{Name: "code"})
		if len(page.Data) != 1 || page.Data[0].ID != own.ID {
			t.Errorf("ListReactors(name=code) = %+v", page)
		}
		page, _ = e.V.ListReactors(ctx, e.Mgmt, tokenvault.ListReactorsRequest{IDs: []string{own.ID}})
		if len(page.Data) != 1 || page.Data[0].ID != own.ID {
			t.Errorf("ListReactors(id) = %+v", page)
		}

		up, err := e.V.UpdateReactor(ctx, e.Mgmt, r.ID, tokenvault.UpdateReactorRequest{Name: "Payments", Configuration: map[string]any{"region": "us", "retries": 1, "live": false}})
		if err != nil || up.Name != "Payments" || up.Application != nil || up.Configuration["region"] != "us" {
			t.Errorf("UpdateReactor = %+v, %v", up, err)
		}
		_, err = e.V.UpdateReactor(ctx, e.Mgmt, r.ID, tokenvault.UpdateReactorRequest{Name: "Payments", Configuration: map[string]any{"region": "us"}})
		vaulttest.WantField(t, err, "configuration.retries")

		err = e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"configuration": {"region": "ap"}, "application": {"id": "`+app.ID+`"}}`))
		if err != nil {
			t.Fatalf("PatchReactor: %v", err)
		}
		got, _ := e.V.GetReactor(ctx, e.Mgmt, r.ID)
		if got.Name != "Payments" || got.Configuration["region"] != "ap" || got.Configuration["live"] != false || got.Application == nil {
			t.Errorf("after patch = %+v, want name kept, region merged, application set", got)
		}
		if err := e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"application": null}`)); err != nil {
			t.Fatal(err)
		}
		got, _ = e.V.GetReactor(ctx, e.Mgmt, r.ID)
		if got.Application != nil {
			t.Errorf("application after null patch = %+v", got.Application)
		}
		err = e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"configuration": {"retries": null}}`))
		vaulttest.WantField(t, err, "configuration.retries")
		err = e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"formula": {"id": "x"}}`))
		vaulttest.WantField(t, err, "formula")

		other := e.Tenant(t, "Other")
		_, err = e.V.GetReactor(ctx, other.Application.Key, r.ID)
		vaulttest.WantKind(t, "GetReactor of another tenant", err, tokenvault.NotFound)
		if err := e.V.DeleteReactor(ctx, e.Mgmt, r.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.V.GetReactor(ctx, e.Mgmt, r.ID)
		vaulttest.WantKind(t, "GetReactor after delete", err, tokenvault.NotFound)

		logs, _ := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "reactor", EntityID: r.ID})
		var ops []string
		for _, l := range logs.Data {
			ops = append(ops, l.Operation)
		}
		if got := strings.Join(ops, ","); got != "delete,read,update,read,update,update,create" {
			t.Errorf("reactor log operations = %s", got)
		}
	})
}

func TestInvokeReactorDetokenizesArgs(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	plain := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode, Configuration: map[string]any{"k": "v"}})
	out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{
		"card":   "{{" + card.ID + "}}",
		"greet":  "Hello {{ " + plain.ID + " }}!",
		"nested": []any{map[string]any{"n": "{{" + card.ID + " | json: '$.number' | last4 }}"}},
		"plain":  7,
	}})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	raw := vaulttest.RoundTrip(t, out.Raw).(map[string]any)
	args := raw["args"].(map[string]any)
	if args["card"].(map[string]any)["number"] != vaulttest.Visa || args["greet"] != "Hello Ada!" || args["plain"] != 7.0 ||
		args["nested"].([]any)[0].(map[string]any)["n"] != "4242" {
		t.Errorf("args the code saw = %v", args)
	}
	if raw["configuration"].(map[string]any)["k"] != "v" || raw["hasClient"] != false {
		t.Errorf("raw = %v", raw)
	}

	_, err = e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"a": map[string]any{"b": "{{nope_token}}"}}})
	vaulttest.WantField(t, err, "args.a.b")
	many := map[string]any{}
	for i := range 101 {
		many[fmt.Sprintf("t%03d", i)] = "{{" + e.Token(t, tokenvault.TokenRequest{Type: "token", Data: i}).ID + "}}"
	}
	_, err = e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: many})
	vaulttest.WantKind(t, "101 tokens", err, tokenvault.Invalid)
	if !strings.Contains(err.Error(), "100") {
		t.Errorf("101 tokens: %v, want the limit named", err)
	}

	// token:use per container.
	pciOnly, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "pci", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{"token:use"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.InvokeReactor(ctx, pciOnly.Key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"c": "{{" + card.ID + "}}"}}); err != nil {
		t.Errorf("token:use on /pci/: %v", err)
	}
	_, err = e.V.InvokeReactor(ctx, pciOnly.Key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"p": "{{" + plain.ID + "}}"}})
	vaulttest.WantKind(t, "token outside the caller's token:use", err, tokenvault.PermissionDenied)
	noUse := e.Reader(t, "reveal", "token:read").Key
	_, err = e.V.InvokeReactor(ctx, noUse, r.ID, tokenvault.InvokeReactorRequest{})
	vaulttest.WantKind(t, "invoke without token:use", err, tokenvault.PermissionDenied)
	_, err = e.V.InvokeReactor(ctx, e.User(t), e.Boot.Tenant.ID, tokenvault.InvokeReactorRequest{})
	vaulttest.WantKind(t, "unknown reactor", err, tokenvault.NotFound)
}

func TestInvokeReactorAppliesParameters(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	f := e.Formula(t, tokenvault.FormulaRequest{RequestParameters: []tokenvault.RequestParameter{
		{Name: "card.number", Type: "string"},
		{Name: "card.expiration_year", Type: "string"},
		{Name: "amount", Type: "number"},
		{Name: "capture", Type: "boolean", Optional: true},
	}})
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
	out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{
		"card": "{{" + card.ID + "}}", "amount": "12.50", "capture": "true", "Amount": 1, "note": "dropped",
	}})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	args := vaulttest.RoundTrip(t, out.Raw).(map[string]any)["args"]
	want := map[string]any{"card": map[string]any{"number": vaulttest.Visa, "expiration_year": "2031"}, "amount": 12.5, "capture": true}
	if fmt.Sprint(args) != fmt.Sprint(want) {
		t.Errorf("args = %v, want %v", args, want)
	}
	_, err = e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"card": "{{" + card.ID + "}}"}})
	vaulttest.WantField(t, err, "args.amount")
	_, err = e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"card": "{{" + card.ID + "}}", "amount": "twelve"}})
	vaulttest.WantField(t, err, "args.amount")
}

func TestReactorClientAndTokenize(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:delete")
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Application: &tokenvault.Ref{ID: app.ID}, Code: `
module.exports = async function (req) {
	const made = await req.client.tokenize({secret: "from-client"});
	const tok = await req.client.getToken(made.secret);
	let denied = "";
	try { await req.client.getToken("no-such-token"); } catch (e) { denied = e.message; }
	return {raw: {data: tok.data, denied: denied}, tokenize: {out: req.args.v}};
};`})
	out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"v": "to tokenize"}})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	raw := vaulttest.RoundTrip(t, out.Raw).(map[string]any)
	if raw["data"] != "from-client" || !strings.Contains(raw["denied"].(string), "not found") {
		t.Errorf("raw = %v", raw)
	}
	id := vaulttest.RoundTrip(t, out.Tokens).(map[string]any)["out"].(string)
	tok, err := e.V.GetToken(ctx, app.Key, id)
	if err != nil || tok.Data != "to tokenize" || tok.CreatedBy != app.ID {
		t.Errorf("tokenized result = %+v, %v; want created by the reactor's application", tok, err)
	}

	// Without an application, tokenize uses the caller; client is null.
	r2 := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = function (req) { return {tokenize: {x: "y"}, raw: req.client} }`})
	caller := e.Reader(t, "reveal", "token:use", "token:create")
	out, err = e.V.InvokeReactor(ctx, caller.Key, r2.ID, tokenvault.InvokeReactorRequest{})
	if err != nil || out.Raw != nil {
		t.Fatalf("InvokeReactor = %+v, %v", out, err)
	}
	id = out.Tokens.(map[string]any)["x"].(string)
	if tok, err := e.V.GetToken(ctx, app.Key, id); err != nil || tok.CreatedBy != caller.ID {
		t.Errorf("token = %+v, %v; want created by the caller", tok, err)
	}
}

func TestReactorErrors(t *testing.T) {
	// Seconds: on a busy machine a worker's start alone can take longer
	// than a fraction of one, and quick code would fail as timed out.
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.Timeout = 3 * time.Second })
	key := e.User(t)
	invoke := func(code string) error {
		t.Helper()
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: code})
		_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{})
		return err
	}
	tests := []struct {
		code    string
		status  int
		message string
		fields  map[string][]string
	}{
		{`module.exports = async () => { throw new BadRequestError("amount too low") }`, 400, "amount too low", nil},
		{`module.exports = async () => { throw new BadRequestError({amount: ["too low"]}) }`, 400, "", map[string][]string{"amount": {"too low"}}},
		{`module.exports = async () => { throw new AuthenticationError("who?") }`, 401, "who?", nil},
		{`module.exports = async () => { throw new AuthorizationError("no") }`, 403, "no", nil},
		{`module.exports = async () => { throw new InvalidPaymentMethodError("declined") }`, 402, "declined", nil},
		{`module.exports = async () => { throw new RateLimitError("slow down") }`, 429, "slow down", nil},
		{`module.exports = async () => { throw new ServiceUnavailableError("down") }`, 503, "down", nil},
		{`module.exports = async () => { throw new ReactorRuntimeError("broken") }`, 500, "broken", nil},
		{`module.exports = async () => { throw new Error("plain") }`, 500, "plain", nil},
		{`module.exports = async () => { null.x }`, 500, "", nil},
		{`module.exports = function () { while (true) {} }`, 500, "time", nil},
	}
	for _, tt := range tests {
		err := invoke(tt.code)
		var te *tokenvault.Error
		if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed || te.Status != tt.status {
			t.Errorf("%s: err = %v (%+v), want CodeFailed %d", tt.code, err, te, tt.status)
			continue
		}
		if !strings.Contains(te.Message, tt.message) {
			t.Errorf("%s: message %q, want %q in it", tt.code, te.Message, tt.message)
		}
		for k, v := range tt.fields {
			if fmt.Sprint(te.Fields[k]) != fmt.Sprint(v) {
				t.Errorf("%s: fields = %v", tt.code, te.Fields)
			}
		}
		for _, leak := range []string{"goroutine", ".go:", "github.com/"} {
			if strings.Contains(te.Message, leak) {
				t.Errorf("%s: message %q leaks host detail", tt.code, te.Message)
			}
		}
	}
	err := invoke(`module.exports = async () => { throw new CustomHttpResponseError({status: 418, headers: {"X-Tea": "yes"}, body: {brew: "no"}}) }`)
	var te *tokenvault.Error
	if !vaulttest.AsError(err, &te) || te.Status != 418 || te.Headers["X-Tea"] != "yes" || fmt.Sprint(te.Body) != "map[brew:no]" {
		t.Errorf("CustomHttpResponseError = %+v", te)
	}
	// The Vault is healthy after a timeout.
	if err := invoke(vaulttest.EchoCode); err != nil {
		t.Errorf("after the timeout: %v", err)
	}
}

// receiver is a loopback webhook receiver that fails its first n requests.
type receiver struct {
	mu      sync.Mutex
	fail    int
	bodies  [][]byte
	sigs    []string
	headers []http.Header
	got     chan struct{}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.fail > 0 {
		rc.fail--
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	rc.bodies = append(rc.bodies, b)
	rc.sigs = append(rc.sigs, r.Header.Get("SVC-Signature"))
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.got <- struct{}{}
}

func TestInvokeReactorAsync(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.WebhookBackoff = time.Millisecond })
	rc := &receiver{fail: 2, got: make(chan struct{}, 4)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async (req) => ({raw: {last4: req.args.n.slice(-4)}})`})
	key := e.User(t)

	_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL, TimeoutMS: 9999})
	vaulttest.WantField(t, err, "timeout_ms")
	_, err = e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL, TimeoutMS: 210001})
	vaulttest.WantField(t, err, "timeout_ms")
	_, err = e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: "ftp://x"})
	vaulttest.WantField(t, err, "callback_url")

	out, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{
		Args: map[string]any{"n": "{{" + card.ID + " | json: '$.number' }}"}, CallbackURL: srv.URL, TimeoutMS: 20000,
	})
	if err != nil || out.InvocationID == "" || out.Raw != nil {
		t.Fatalf("async InvokeReactor = %+v, %v", out, err)
	}
	select {
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook delivered")
	}
	rc.mu.Lock()
	body, sig := rc.bodies[0], rc.sigs[0]
	rc.mu.Unlock()
	var hook tokenvault.Webhook
	if err := json.Unmarshal(body, &hook); err != nil {
		t.Fatal(err)
	}
	if hook.InvocationID != out.InvocationID || hook.Status != "succeeded" || hook.ReactorID != r.ID || fmt.Sprint(hook.Result.Raw) != "map[last4:4242]" {
		t.Errorf("webhook = %s", body)
	}
	secret, err := e.V.WebhookSecret(ctx, e.Mgmt)
	if err != nil {
		t.Fatal(err)
	}
	if !tokenvault.VerifyWebhook(secret, body, sig) {
		t.Errorf("signature %q does not verify", sig)
	}
	for _, bad := range []string{"", "zz", secret[:10]} {
		if _, err := tokenvault.SignWebhook(bad, body); err == nil {
			t.Errorf("SignWebhook with secret %q: no error", bad)
		}
		if tokenvault.VerifyWebhook(bad, body, sig) {
			t.Errorf("VerifyWebhook with secret %q accepted", bad)
		}
	}
	if tokenvault.VerifyWebhook(secret, append(body, ' '), sig) {
		t.Error("VerifyWebhook accepted another body")
	}
	// Signed the Standard Webhooks way too: webhook-id is the invocation.
	rc.mu.Lock()
	header := rc.headers[0]
	rc.mu.Unlock()
	std, err := tokenvault.CallbackSecretStandard(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhooks.VerifyAt(std, header, body, hook.DeliveredAt); err != nil || header.Get("webhook-id") != out.InvocationID {
		t.Errorf("Standard Webhooks signature: %v (webhook-id %q)", err, header.Get("webhook-id"))
	}
	if _, err := tokenvault.CallbackSecretStandard(secret[:10]); err == nil {
		t.Error("CallbackSecretStandard took a short secret")
	}
	other := e.Tenant(t, "Other")
	if s2, _ := e.V.WebhookSecret(ctx, other.Application.Key); s2 == secret {
		t.Error("two tenants share a webhook secret")
	}

	// A failure is delivered too.
	bad := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async () => { throw new BadRequestError("nope") }`})
	if _, err := e.V.InvokeReactor(ctx, key, bad.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no failure webhook delivered")
	}
	rc.mu.Lock()
	body = rc.bodies[1]
	rc.mu.Unlock()
	if err := json.Unmarshal(body, &hook); err != nil || hook.Status != "failed" || hook.Error == nil || hook.Error.Status != 400 {
		t.Errorf("failure webhook = %s", body)
	}
	_ = context.Background
}

// TestReactorEditableAfterItsFormulaChanged: a formula in use may be given
// other configuration declarations; its reactors stay editable (a rename
// keeps the configuration, which is not checked again), and a new
// configuration must satisfy the new declarations.
func TestReactorEditableAfterItsFormulaChanged(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		f := e.Formula(t, tokenvault.FormulaRequest{Name: "F", Configuration: []tokenvault.ConfigurationDeclaration{{Name: "k", Type: "string"}}})
		r := e.Reactor(t, tokenvault.CreateReactorRequest{Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{"k": "v"}})
		if _, err := e.V.UpdateFormula(ctx, e.Mgmt, f.ID, tokenvault.FormulaRequest{Name: "F", Code: vaulttest.EchoCode,
			Configuration: []tokenvault.ConfigurationDeclaration{{Name: "k", Type: "number"}, {Name: "z", Type: "string"}}}); err != nil {
			t.Fatalf("UpdateFormula with new declarations: %v", err)
		}
		if err := e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"name": "renamed"}`)); err != nil {
			t.Errorf("renaming the reactor: %v", err)
		}
		err := e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"configuration": {"k": "still a string"}}`))
		vaulttest.WantField(t, err, "configuration.k")
		if err := e.V.PatchReactor(ctx, e.Mgmt, r.ID, json.RawMessage(`{"configuration": {"k": 1, "z": "x"}}`)); err != nil {
			t.Errorf("a configuration the new declarations accept: %v", err)
		}
		got, err := e.V.GetReactor(ctx, e.Mgmt, r.ID)
		if err != nil || got.Name != "renamed" || fmt.Sprint(got.Configuration["z"]) != "x" {
			t.Errorf("reactor = %+v, %v", got, err)
		}
	})
}

// TestCallbackURLOnAPrivateAddress: where the Vault does not call private
// addresses, a callback_url that is one (an address literal, or
// localhost) is a 400 when the reactor is invoked, not a 202 whose
// delivery fails after its retries.
func TestCallbackURLOnAPrivateAddress(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode})
	key := e.User(t)
	for _, u := range []string{"http://127.0.0.1:1/hook", "https://localhost/hook", "https://10.1.2.3/", "https://[::1]/", "https://[fe80::1%25eth0]/", "https://169.254.169.254/"} {
		_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: u})
		vaulttest.WantField(t, err, "callback_url")
	}
}
