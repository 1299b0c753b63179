package jsrt

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClient records calls and answers from its fields.
type fakeClient struct {
	mu       sync.Mutex
	calls    []string
	bodies   []any
	deadline bool // every call's ctx had a deadline
	err      error
}

func (c *fakeClient) record(ctx context.Context, call string, body any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	c.bodies = append(c.bodies, body)
	_, ok := ctx.Deadline()
	c.deadline = ok && (len(c.calls) == 1 || c.deadline)
}

func (c *fakeClient) Tokenize(ctx context.Context, body any) (any, error) {
	c.record(ctx, "tokenize", body)
	if c.err != nil {
		return nil, c.err
	}
	return map[string]any{"id": "tok_1", "type": "token", "n": 1, "tags": []string{"a"}}, nil
}

func (c *fakeClient) GetToken(ctx context.Context, id string) (any, error) {
	c.record(ctx, "getToken "+id, nil)
	if c.err != nil {
		return nil, c.err
	}
	return struct {
		ID   string `json:"id"`
		Data string `json:"data"`
	}{ID: id, Data: "secret"}, nil
}

func (c *fakeClient) DeleteToken(ctx context.Context, id string) error {
	c.record(ctx, "deleteToken "+id, nil)
	return c.err
}

func (c *fakeClient) GetTokenIntent(ctx context.Context, id string) (any, error) {
	c.record(ctx, "getTokenIntent "+id, nil)
	if c.err != nil {
		return nil, c.err
	}
	return map[string]any{"id": id, "type": "card"}, nil
}

func (c *fakeClient) DeleteTokenIntent(ctx context.Context, id string) error {
	c.record(ctx, "deleteTokenIntent "+id, nil)
	return c.err
}

func (c *fakeClient) Detokenize(ctx context.Context, body any) (any, error) {
	c.record(ctx, "detokenize", body)
	if c.err != nil {
		return nil, c.err
	}
	return body, nil
}

func TestClient(t *testing.T) {
	r := New(Options{})
	c := &fakeClient{}
	code := `module.exports = async (req) => {
		const t = await req.client.tokenize({type: 'token', data: req.args.card});
		const got = req.client.getToken(t.id);
		const del = await req.client.deleteToken(t.id);
		const d = await req.client.detokenize({x: '{{ ` + "`" + `x` + "`" + ` }}', n: [1, 2.5]});
		return {t, got, del: del === undefined, d, methods: Object.keys(req.client).sort()};
	}`
	got := runOK(t, r, code, map[string]any{"args": map[string]any{"card": "4242"}}, c)
	want := map[string]any{
		"t":       map[string]any{"id": "tok_1", "type": "token", "n": 1.0, "tags": []any{"a"}},
		"got":     map[string]any{"id": "tok_1", "data": "secret"},
		"del":     true,
		"d":       map[string]any{"x": "{{ `x` }}", "n": []any{1.0, 2.5}},
		"methods": []any{"deleteToken", "deleteTokenIntent", "detokenize", "getToken", "getTokenIntent", "tokenize"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tokenize", "getToken tok_1", "deleteToken tok_1", "detokenize"}, c.calls); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"type": "token", "data": "4242"}, c.bodies[0]); diff != "" {
		t.Errorf("tokenize body mismatch (-want +got):\n%s", diff)
	}
	if !c.deadline {
		t.Error("a client call got a context without the invocation's deadline")
	}
}

func TestClientNil(t *testing.T) {
	r := New(Options{})
	if got := runOK(t, r, `module.exports = (req) => req.client === null`, nil, nil); got != true {
		t.Errorf("req.client === null = %v", got)
	}
	e := runErr(t, r, `module.exports = (req) => req.client.tokenize({})`, nil, nil)
	if e.Kind != Thrown || e.Message != "TypeError: "+withheldMessage {
		t.Errorf("calling a nil client = %#v", e)
	}
}

func TestClientErrors(t *testing.T) {
	r := New(Options{})
	c := &fakeClient{err: errors.New("token not found")}

	// An error from the host is an Error in the code, which can catch it.
	got := runOK(t, r, `module.exports = async (req) => {
		const out = [];
		for (const f of [() => req.client.tokenize({}), () => req.client.getToken('x'), () => req.client.deleteToken('x'), () => req.client.detokenize({})]) {
			try { await f() } catch (e) { out.push(e instanceof Error, e.message) }
		}
		return out;
	}`, nil, c)
	want := []any{true, "token not found", true, "token not found", true, "token not found", true, "token not found"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("caught errors mismatch (-want +got):\n%s", diff)
	}

	// Uncaught, it is a Thrown Error with the host's message.
	e := runErr(t, r, `module.exports = async (req) => { await req.client.getToken('x') }`, nil, c)
	if diff := cmp.Diff(&Error{Kind: Thrown, Status: 500, Class: "Error", Message: "token not found"}, e); diff != "" {
		t.Errorf("uncaught host error mismatch (-want +got):\n%s", diff)
	}

	// Arguments are checked before the host sees them.
	c = &fakeClient{}
	for code, want := range map[string]string{
		`module.exports = (req) => req.client.tokenize({f() {}})`: "TypeError: tokenize: body.f is a function, which is not JSON-compatible",
		`module.exports = (req) => req.client.getToken(42)`:       "TypeError: getToken: the token id must be a string",
		`module.exports = (req) => req.client.deleteToken()`:      "TypeError: deleteToken: the token id must be a string",
	} {
		e = runErr(t, r, code, nil, c)
		if e.Kind != Thrown || e.Message != want {
			t.Errorf("Run(%q) = %#v, want %q", code, e, want)
		}
	}
	e = runErr(t, r, `module.exports = (req) => req.client.tokenize({get x() { throw new RateLimitError('from a getter') }})`, nil, c)
	if e.Kind != Thrown || e.Class != "RateLimitError" || e.Message != "from a getter" {
		t.Errorf("argument with a throwing getter = %#v, want the RateLimitError", e)
	}
	if len(c.calls) != 0 {
		t.Errorf("the host was called with bad arguments: %v", c.calls)
	}
}

// slowClient blocks until its ctx ends.
type slowClient struct{ fakeClient }

func (c *slowClient) GetToken(ctx context.Context, id string) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestClientCallEndsAtTheDeadline(t *testing.T) {
	r := New(Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	e := runErr(t, r, `module.exports = async (req) => { try { await req.client.getToken('x') } catch (e) {} while (true) {} }`, nil, &slowClient{})
	if e.Kind != Timeout {
		t.Errorf("slow client = %#v, want Timeout", e)
	}
	if d := time.Since(start); d > slack {
		t.Errorf("Run took %v", d)
	}
	checkWorks(t, r)
}

// TestClientLoneSurrogate: a body the code passes to the client with a
// lone surrogate is refused in the code (an error it can catch), never
// handed to the host with U+FFFD in its place.
func TestClientLoneSurrogate(t *testing.T) {
	r := New(Options{})
	c := &fakeClient{}
	got := runOK(t, r, `module.exports = async (req) => {
		try { await req.client.tokenize({type: 'token', data: '\ud800'}); return 'stored' } catch (e) { return e.message }
	}`, nil, c)
	if s, _ := got.(string); !strings.Contains(s, "not valid Unicode") {
		t.Errorf("tokenize with a lone surrogate = %v, want it refused", got)
	}
	if len(c.calls) != 0 {
		t.Errorf("the host was called: %v %v", c.calls, c.bodies)
	}
}
