package reactors_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// echoServer answers a JSON echo of the request, or a big body on /big.
func echoServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			io.WriteString(w, strings.Repeat("x", tokenvault.MaxFetchResponseBytes+1))
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("X-Request"))
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"method": "`+r.Method+`", "body": `+string(b)+`}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// invokeCode creates a reactor with code and invokes it with args.
func invokeCode(t *testing.T, e *vaulttest.Env, code string, args map[string]any) (any, error) {
	t.Helper()
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: code})
	res, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: args})
	if err != nil {
		return nil, err
	}
	return res.Raw, nil
}

func TestReactorFetch(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New())
	srv := echoServer(t)
	got, err := invokeCode(t, e, `module.exports = async (req) => {
		const r = await fetch(req.args.url, {method: "POST", headers: {"X-Request": "hello"}, body: JSON.stringify({a: 1})});
		return {raw: {status: r.status, ok: r.ok, echo: r.headers.get("x-echo"), json: await r.json()}};
	}`, map[string]any{"url": srv.URL + "/pay"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": 201.0, "ok": true, "echo": "hello", "json": map[string]any{"method": "POST", "body": map[string]any{"a": 1.0}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fetch result (-want +got):\n%s", diff)
	}
}

// fetchError runs one fetch in a reactor and returns the message it was
// rejected with ("" when it succeeded).
const fetchError = `module.exports = async (req) => {
	const out = [];
	for (const url of req.args.urls) {
		try { await (await fetch(url)).text(); out.push("") } catch (e) { out.push(String(e && e.message)) }
	}
	return {raw: out};
}`

func TestFetchFollowsTheOutboundPolicy(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Outbound.AllowPrivateDestinations = false })
	srv := echoServer(t)
	got, err := invokeCode(t, e, fetchError, map[string]any{"urls": []any{srv.URL, "http://169.254.169.254/latest/meta-data/", "http://[::1]:1/", "file:///etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range got.([]any) {
		if msg == "" {
			t.Errorf("fetch %d succeeded, want refused", i)
		}
		if strings.Contains(msg.(string), "127.0.0.1") || strings.Contains(msg.(string), "169.254") {
			t.Errorf("fetch %d: message %q quotes the URL", i, msg)
		}
	}
	if msg := got.([]any)[0].(string); !strings.Contains(msg, "private network") {
		t.Errorf("loopback fetch: %q, want the private-network refusal", msg)
	}
}

func TestFetchLimits(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New())
	srv := echoServer(t)
	urls := []any{srv.URL + "/big"}
	for range tokenvault.MaxFetchesPerInvocation {
		urls = append(urls, srv.URL)
	}
	got, err := invokeCode(t, e, fetchError, map[string]any{"urls": urls})
	if err != nil {
		t.Fatal(err)
	}
	msgs := got.([]any)
	if !strings.Contains(msgs[0].(string), "over") {
		t.Errorf("a 5 MiB + 1 answer: %q, want refused", msgs[0])
	}
	for i := 1; i < tokenvault.MaxFetchesPerInvocation; i++ {
		if msgs[i] != "" {
			t.Errorf("fetch %d: %q, want success", i, msgs[i])
		}
	}
	if last := msgs[len(msgs)-1].(string); !strings.Contains(last, "at most") {
		t.Errorf("fetch %d: %q, want the per-invocation limit", len(msgs), last)
	}
}
