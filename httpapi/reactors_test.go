package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

func TestReactorsOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, user := s.app(t, map[string]any{"name": "u", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:use"}}}})

	r := s.do(t, "POST", "/reactor-formulas", s.mgmt, map[string]any{"name": "f", "code": "module.exports = function (req) {\n  var x = ;\n}"})
	wantStatus(t, "formula with a syntax error", r, http.StatusBadRequest)
	if p := r.problem(t); !strings.Contains(strings.Join(p.Errors["code"], ""), "line 2") {
		t.Errorf("errors = %v, want the line on code", p.Errors)
	}
	r = s.do(t, "POST", "/reactor-formulas", s.mgmt, map[string]any{"name": "f", "code": "module.exports = 1"})
	wantStatus(t, "formula that exports no function", r, http.StatusUnprocessableEntity)

	r = s.do(t, "POST", "/reactor-formulas", s.mgmt, map[string]any{
		"name": "Greeter", "code": "module.exports = async (req) => ({raw: {hello: req.args.name, tz: req.configuration.tz}, tokenize: {n: req.args.name}})",
		"configuration":      []map[string]any{{"name": "tz", "type": "string"}},
		"request_parameters": []map[string]any{{"name": "name", "type": "string"}},
	})
	wantStatus(t, "POST /reactor-formulas", r, http.StatusCreated)
	var f tokenvault.Formula
	r.json(t, &f)
	r = s.do(t, "GET", "/reactor-formulas/"+f.ID, s.mgmt, nil)
	wantStatus(t, "GET /reactor-formulas/{id}", r, http.StatusOK)
	r = s.do(t, "GET", "/reactor-formulas", s.mgmt, nil)
	wantStatus(t, "GET /reactor-formulas", r, http.StatusOK)

	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "Hi", "formula": map[string]any{"id": f.ID}, "configuration": map[string]any{"tz": 1}})
	wantStatus(t, "reactor with a wrong configuration type", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["configuration.tz"] == nil {
		t.Errorf("errors = %v", p.Errors)
	}
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "Hi", "formula": map[string]any{"id": f.ID}, "configuration": map[string]any{"tz": "UTC"}})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)

	// The formula may get other declarations; the reactor stays
	// editable, and a new configuration must satisfy them.
	r = s.do(t, "PUT", "/reactor-formulas/"+f.ID, s.mgmt, map[string]any{"name": "Greeter", "code": f.Code,
		"configuration": []map[string]any{{"name": "tz", "type": "number"}}, "request_parameters": []map[string]any{{"name": "name", "type": "string"}}})
	wantStatus(t, "PUT a formula with other declarations", r, http.StatusOK)
	r = s.do(t, "PATCH", "/reactors/"+re.ID, s.mgmt, `{"name": "Renamed"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH the reactor's name after its formula changed", r, http.StatusNoContent)
	r = s.do(t, "PATCH", "/reactors/"+re.ID, s.mgmt, `{"configuration": {"tz": "CET"}}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH a configuration the formula no longer accepts", r, http.StatusBadRequest)
	r = s.do(t, "PUT", "/reactor-formulas/"+f.ID, s.mgmt, map[string]any{"name": "Greeter", "code": f.Code,
		"configuration": []map[string]any{{"name": "tz", "type": "string"}}, "request_parameters": []map[string]any{{"name": "name", "type": "string"}}})
	wantStatus(t, "PUT the formula back", r, http.StatusOK)

	r = s.do(t, "PATCH", "/reactors/"+re.ID, s.mgmt, `{"name": "Hello"}`)
	wantStatus(t, "PATCH with application/json", r, http.StatusUnsupportedMediaType)
	r = s.do(t, "PATCH", "/reactors/"+re.ID, s.mgmt, `{"name": "Hello"}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH /reactors/{id}", r, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("PATCH body = %s", r.body)
	}
	r = s.do(t, "GET", "/reactors?name=hel*&id="+re.ID, s.mgmt, nil)
	wantStatus(t, "GET /reactors", r, http.StatusOK)
	var page tokenvault.Page[tokenvault.Reactor]
	r.json(t, &page)
	if len(page.Data) != 1 || page.Data[0].Name != "Hello" || page.Data[0].Configuration["tz"] != "UTC" {
		t.Errorf("reactors = %s", r.body)
	}
	r = s.do(t, "PUT", "/reactors/"+re.ID, s.mgmt, map[string]any{"name": "Hi again", "configuration": map[string]any{"tz": "CET"}})
	wantStatus(t, "PUT /reactors/{id}", r, http.StatusOK)

	r = s.do(t, "POST", "/tokenize", user, `{"name": "Ada"}`)
	var toks struct{ Name string }
	r.json(t, &toks)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"args": map[string]any{"name": "{{" + toks.Name + "}}", "extra": 1}})
	wantStatus(t, "POST /reactors/{id}/react", r, http.StatusOK)
	var out struct {
		Raw    map[string]any
		Tokens map[string]string
	}
	r.json(t, &out)
	if out.Raw["hello"] != "Ada" || out.Raw["tz"] != "CET" || out.Tokens["n"] == "" {
		t.Errorf("react = %s", r.body)
	}
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"args": map[string]any{}})
	wantStatus(t, "react without a required parameter", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["args.name"] == nil {
		t.Errorf("errors = %v", p.Errors)
	}
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", s.mgmt, map[string]any{})
	wantStatus(t, "react with a management key", r, http.StatusForbidden)

	// An error class of the code is a problem whose type says it is the
	// code's, not the vault's: the client maps it to CodeFailed.
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "bad", "code": `module.exports = async () => { throw new BadRequestError("no") }`})
	wantStatus(t, "POST /reactors throwing", r, http.StatusCreated)
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{})
	wantStatus(t, "react with BadRequestError", r, http.StatusBadRequest)
	if p := r.problem(t); p.Type != tokenvault.CodeFailedProblemType {
		t.Errorf("problem type = %q, want %q", p.Type, tokenvault.CodeFailedProblemType)
	}
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "teapot", "code": `module.exports = async () => { throw new CustomHttpResponseError({status: 418, headers: {"X-Tea": "earl grey"}, body: {brew: false}}) }`})
	wantStatus(t, "POST /reactors with code", r, http.StatusCreated)
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{})
	if r.status != 418 || r.header.Get("X-Tea") != "earl grey" || strings.TrimSpace(string(r.body)) != `{"brew":false}` {
		t.Errorf("custom response = %d %v %s", r.status, r.header, r.body)
	}
	// The code's framing headers are left out: the answer is the body
	// it gave, whole, not 500 bytes promised and 3 sent.
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "framing", "code": `module.exports = async () => { throw new CustomHttpResponseError({status: 400, headers: {"Content-Length": "500", "Transfer-Encoding": "chunked", "Connection": "close", "Content-Type": "text/plain", "X-Kept": "1"}, body: "abc"}) }`})
	wantStatus(t, "POST /reactors with framing headers", r, http.StatusCreated)
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{})
	if r.status != 400 || string(r.body) != "abc" || r.header.Get("X-Kept") != "1" || r.header.Get("Connection") != "" {
		t.Errorf("custom response with framing headers = %d %v %q", r.status, r.header, r.body)
	}
	// A header value with a line break fails the code, naming the header.
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "crlf", "code": `module.exports = async () => { throw new CustomHttpResponseError({status: 400, headers: {"X-A": "a\r\nSet-Cookie: x=1"}, body: "abc"}) }`})
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{})
	wantStatus(t, "CustomHttpResponseError with a line break in a header", r, http.StatusInternalServerError)
	if p := r.problem(t); p.Errors["headers.X-A"] == nil || r.header.Get("Set-Cookie") != "" {
		t.Errorf("problem %+v, headers %v: want headers.X-A named and no Set-Cookie", p, r.header)
	}
	r = s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "bad", "code": `module.exports = async () => { throw new RateLimitError("slow") }`})
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{})
	wantStatus(t, "RateLimitError", r, http.StatusTooManyRequests)
	if p := r.problem(t); !strings.Contains(p.Detail, "slow") {
		t.Errorf("detail = %q", p.Detail)
	}

	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"callback_url": "http://127.0.0.1:1/hook", "timeout_ms": 5})
	wantStatus(t, "react with timeout_ms out of range", r, http.StatusBadRequest)
	r = s.do(t, "GET", "/tenants/self/webhook-secret", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/webhook-secret", r, http.StatusOK)
	var secret struct{ Secret string }
	r.json(t, &secret)

	hooks := make(chan []byte, 1)
	sigs := make(chan string, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sigs <- r.Header.Get("SVC-Signature")
		hooks <- b
	}))
	defer recv.Close()
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"callback_url": recv.URL, "timeout_ms": 10000})
	wantStatus(t, "asynchronous react", r, http.StatusAccepted)
	var accepted struct {
		InvocationID string `json:"invocation_id"`
	}
	r.json(t, &accepted)
	select {
	case body := <-hooks:
		if sig := <-sigs; !tokenvault.VerifyWebhook(secret.Secret, body, sig) {
			t.Errorf("signature %q does not verify", sig)
		}
		if !strings.Contains(string(body), accepted.InvocationID) || !strings.Contains(string(body), `"status":429`) {
			t.Errorf("webhook = %s", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook")
	}

	r = s.do(t, "DELETE", "/reactors/"+re.ID, s.mgmt, nil)
	wantStatus(t, "DELETE /reactors/{id}", r, http.StatusNoContent)
	r = s.do(t, "DELETE", "/reactor-formulas/"+f.ID, s.mgmt, nil)
	wantStatus(t, "DELETE a formula in use", r, http.StatusConflict)
}

// TestPrivateCallbackURLOverHTTP: where private addresses are not called,
// a callback_url on one is a 400 naming it, not a 202.
func TestPrivateCallbackURLOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	_, user := s.app(t, map[string]any{"name": "u", "type": "private", "permissions": []string{"token:use"}})
	r := s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "r", "code": "module.exports = async () => ({raw: {}})"})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"callback_url": "http://127.0.0.1:1/hook"})
	wantStatus(t, "react with a loopback callback_url", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["callback_url"] == nil {
		t.Errorf("errors = %v, want callback_url", p.Errors)
	}
}
