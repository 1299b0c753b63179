package reactors_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// wantTooLarge checks err is TooLarge naming the 64 KiB bound.
func wantTooLarge(t *testing.T, what string, err error) {
	t.Helper()
	var e *tokenvault.Error
	if !vaulttest.AsError(err, &e) || e.Kind != tokenvault.TooLarge || !strings.Contains(e.Message, "64 KiB") {
		t.Errorf("%s = %v, want TooLarge naming 64 KiB", what, err)
	}
}

// TestCodeResultsAreBounded: with CodeMaxResultBytes 64 KiB, a reactor
// returning more is TooLarge naming the limit, one returning a little
// less succeeds; and the default is 4 MiB. Before, results up to about
// 30 MB were accepted and each was held whole by the server.
func TestCodeResultsAreBounded(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.MaxResultBytes = 64 << 10 })
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async req => ({raw: "x".repeat(req.args.n)})`})
	key := e.User(t)
	res, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"n": 60000}})
	if err != nil || len(res.Raw.(string)) != 60000 {
		t.Fatalf("a result under the bound: %v", err)
	}
	_, err = e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"n": 70000}})
	wantTooLarge(t, "a result over the bound", err)

	thrower := e.Reactor(t, tokenvault.CreateReactorRequest{Name: "thrower", Code: `module.exports = async () => { throw new CustomHttpResponseError({status: 400, body: "x".repeat(70000)}) }`})
	_, err = e.V.InvokeReactor(ctx, key, thrower.ID, tokenvault.InvokeReactorRequest{})
	wantTooLarge(t, "an error body over the bound", err)

	if tokenvault.DefaultCodeMaxResultBytes != 4<<20 {
		t.Errorf("DefaultCodeMaxResultBytes = %d, want 4 MiB", tokenvault.DefaultCodeMaxResultBytes)
	}
	d := vaulttest.NewEnvOn(t, memory.New())
	r = d.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async req => ({raw: "x".repeat(req.args.n)})`})
	_, err = d.V.InvokeReactor(ctx, d.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"n": 4 << 20}})
	var te *tokenvault.Error
	if !vaulttest.AsError(err, &te) || te.Kind != tokenvault.TooLarge || !strings.Contains(te.Message, "4 MiB") {
		t.Errorf("a 4 MiB result by default = %v, want TooLarge naming 4 MiB", err)
	}
}

// TestTransformBodiesAreBounded: a request or response transform whose
// result is over CodeMaxResultBytes, or that builds a body over it (a form
// is longer than the JSON it came from), fails the call with TooLarge
// naming the limit; a transform that leaves the destination's larger
// answer as it came is not refused.
func TestTransformBodiesAreBounded(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.MaxResultBytes = 64 << 10 })
	d := vaulttest.NewDestination(t)
	user := e.User(t)
	transform := func(code string) *tokenvault.ProxyTransform {
		return &tokenvault.ProxyTransform{Code: "module.exports = async req => " + code}
	}
	big := e.Proxy(t, tokenvault.ProxyRequest{Name: "request", DestinationURL: d.Srv.URL, RequestTransform: transform(`({body: {s: "x".repeat(70000)}})`)})
	_, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(big.Key, user, "", `{}`))
	wantTooLarge(t, "a request transform's result over the bound", err)

	// About 40 KB of JSON, about 120 KB as a form.
	form := e.Proxy(t, tokenvault.ProxyRequest{Name: "form", DestinationURL: d.Srv.URL, RequestTransform: transform(`({body: {s: "é".repeat(20000)}})`)})
	call := tokenvault.ProxyCall{ProxyKey: form.Key, APIKey: user, Method: "POST", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte("a=1")}
	_, err = e.V.InvokeProxy(ctx, call)
	wantTooLarge(t, "a form body the transform built over the bound", err)
	if err != nil && !strings.Contains(err.Error(), "body the transform built") {
		t.Errorf("message = %v, want it to name the body the transform built", err)
	}

	resp := e.Proxy(t, tokenvault.ProxyRequest{Name: "response", DestinationURL: d.Srv.URL, ResponseTransform: transform(`({body: {s: "x".repeat(70000)}})`)})
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(resp.Key, user, "", `{}`))
	wantTooLarge(t, "a response transform's result over the bound", err)

	// The destination echoes the 66 KB request; the transform only adds a
	// header, so the body it did not build passes.
	headers := e.Proxy(t, tokenvault.ProxyRequest{Name: "headers", DestinationURL: d.Srv.URL, ResponseTransform: transform(`({headers: {"X-Seen": "1"}})`)})
	res, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(headers.Key, user, "", `{"s": ["`+strings.Repeat("y", 33000)+`", "`+strings.Repeat("z", 33000)+`"]}`))
	if err != nil || res.Header.Get("X-Seen") != "1" || len(res.Body) < 66000 {
		t.Errorf("a transform leaving a large answer as it came = %v", err)
	}
	small := e.Proxy(t, tokenvault.ProxyRequest{Name: "small", DestinationURL: d.Srv.URL, RequestTransform: transform(`({body: {s: "x".repeat(60000)}})`)})
	if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(small.Key, user, "", `{}`)); err != nil {
		t.Errorf("a transform's body under the bound: %v", err)
	}
}
