package events_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// Which webhooks an event is queued for, when nothing is, and what a read
// that emits costs on a store that appends.

// typesOf lists the types of events, in order.
func typesOf(events []vaulttest.TappedEvent) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Info.Type)
	}
	return out
}

// TestEventTargets: "*" covers every type but the high-volume ones,
// naming token.read subscribes to it, a disabled webhook gets nothing,
// another tenant's webhook gets nothing, and a tenant without webhooks
// emits nothing.
func TestEventTargets(t *testing.T) {
	e, _, tap := newEventEnv(t)
	tid := e.Boot.Tenant.ID
	star, _, err := vaulttest.PutEventWebhook(ctx, e.V, tid, []string{"*"}, true)
	mustDo(t, "PutTestWebhook", err)
	reads, _, err := vaulttest.PutEventWebhook(ctx, e.V, tid, []string{tokenvault.EventTokenRead}, true)
	mustDo(t, "PutTestWebhook", err)
	_, _, err = vaulttest.PutEventWebhook(ctx, e.V, tid, []string{"*", tokenvault.EventTokenRead}, false)
	mustDo(t, "PutTestWebhook disabled", err)
	// Two more tenants, each with an application that creates tokens;
	// only the first gets a webhook.
	var tenants []*tokenvault.TenantBootstrap
	var creators []tokenvault.Credential
	for _, name := range []string{"Other", "Quiet"} {
		boot := e.Tenant(t, name)
		app := expect[*tokenvault.Application](t, "CreateApplication")(e.V.CreateApplication(ctx, boot.Application.Key,
			tokenvault.CreateApplicationRequest{Name: "creator", Type: tokenvault.Private, Permissions: []string{"token:create"}}))
		tenants, creators = append(tenants, boot), append(creators, app.Key)
	}
	other := tenants[0]
	otherHook, _, err := vaulttest.PutEventWebhook(ctx, e.V, other.Tenant.ID, []string{"*", tokenvault.EventTokenRead}, true)
	mustDo(t, "PutTestWebhook other", err)

	reader := e.Reader(t, "reveal", "token:create", "token:read")
	tok := expect[*tokenvault.Token](t, "CreateToken")(e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}))
	expect[*tokenvault.Token](t, "GetToken")(e.V.GetToken(ctx, reader.Key, tok.ID))
	events := tap.Events()
	// The reader's creation (application.created) came first.
	if got := typesOf(events); !slices.Equal(got, []string{"application.created", "token.created", "token.read"}) {
		t.Fatalf("events %v", got)
	}
	for _, ev := range events {
		want := []string{star}
		if ev.Info.Type == tokenvault.EventTokenRead {
			want = []string{reads}
		}
		if ev.TenantID != tid || !slices.Equal(ev.Targets, want) {
			t.Errorf("%s: tenant %s, targets %v; want %s, %v", ev.Info.Type, ev.TenantID, ev.Targets, tid, want)
		}
	}

	// The other tenant's token reaches its own webhook only; the quiet
	// tenant's reaches none, so emits nothing.
	for _, key := range creators {
		expect[*tokenvault.Token](t, "CreateToken")(e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "y"}))
	}
	rest := tap.Events()[len(events):]
	if len(rest) != 1 || rest[0].TenantID != other.Tenant.ID || rest[0].Info.TenantID != other.Tenant.ID || !slices.Equal(rest[0].Targets, []string{otherHook}) {
		t.Errorf("after the other tenants' creates: %+v", rest)
	}
}

// TestRolledBackChangeEmitsNothing: a detokenization that reads one token
// and then fails on an unknown one emits no token.read (its transaction
// rolled back), while the same request with two known tokens emits two.
func TestRolledBackChangeEmitsNothing(t *testing.T) {
	e, _, tap := newEventEnv(t)
	_, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{tokenvault.EventTokenRead}, true)
	mustDo(t, "PutTestWebhook", err)
	reader := e.Reader(t, "reveal", "token:create", "token:read", "token:use")
	a := expect[*tokenvault.Token](t, "CreateToken")(e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "a"}))
	b := expect[*tokenvault.Token](t, "CreateToken")(e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "b"}))
	_, err = e.V.Detokenize(ctx, reader.Key, []any{"{{ " + a.ID + " }}", "{{ 0190d0c4-0000-7000-8000-000000000000 }}"})
	vaulttest.WantKind(t, "Detokenize with an unknown token", err, tokenvault.Invalid)
	if got := typesOf(tap.Events()); len(got) != 0 {
		t.Fatalf("a failed detokenization emitted %v", got)
	}
	expect[any](t, "Detokenize")(e.V.Detokenize(ctx, reader.Key, []any{"{{ " + a.ID + " }}", "{{ " + b.ID + " }}"}))
	if got := typesOf(tap.Events()); !slices.Equal(got, []string{"token.read", "token.read"}) {
		t.Fatalf("a detokenization of two tokens emitted %v", got)
	}
}

// TestTokenReadEventCommits: on a store that appends, a read whose
// token.read some webhook subscribes to commits (its event's writes must
// be in the store's file at once, for the dispatcher), and a read no
// webhook subscribes to is still appended: "*" alone costs reads nothing
// but the scan of the tenant's webhooks.
func TestTokenReadEventCommits(t *testing.T) {
	s, _ := vaulttest.OpenCountingAppender(t)
	e := vaulttest.NewEnvOn(t, s)
	tap := vaulttest.TapEvents(e.V)
	_, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{"*"}, true)
	mustDo(t, "PutTestWebhook", err)
	reader, tok := e.SecretToken(t)
	before := s.Appends.Load()
	expect[*tokenvault.Token](t, "GetToken")(e.V.GetToken(ctx, reader.Key, tok.ID))
	if n := s.Appends.Load() - before; n != 1 {
		t.Fatalf("a read no webhook hears of appended %d times, want 1", n)
	}
	_, _, err = vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{tokenvault.EventTokenRead}, true)
	mustDo(t, "PutTestWebhook", err)
	before, events := s.Appends.Load(), len(tap.Events())
	got := expect[*tokenvault.Token](t, "GetToken")(e.V.GetToken(ctx, reader.Key, tok.ID))
	if n := s.Appends.Load() - before; n != 0 {
		t.Errorf("a read with a token.read subscription appended %d times, want a commit", n)
	}
	if got.Data != "secret" {
		t.Errorf("read %v", got.Data)
	}
	if rest := typesOf(tap.Events()[events:]); !slices.Equal(rest, []string{"token.read"}) {
		t.Errorf("events of the read: %v", rest)
	}
}

// TestEventsOverHTTP: changes made over HTTP (and through the Go client)
// emit the same events, with the request's X-Request-Id, or the trace id
// of its traceparent, as trace_id; a request with neither carries none.
func TestEventsOverHTTP(t *testing.T) {
	e, _, tap := newEventEnv(t)
	_, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{"*", tokenvault.EventTokenRead}, true)
	mustDo(t, "PutTestWebhook", err)
	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	defer srv.Close()
	reader := e.Reader(t, "reveal", "token:create", "token:read", "token:delete")
	do := func(method, path, body string, header map[string]string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(httpapi.APIKeyHeader, string(reader.Key))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %v %v", method, path, resp.StatusCode, out, err)
		}
		return out
	}
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	before := len(tap.Events())
	tok := do("POST", "/tokens", `{"type": "token", "data": "over-http-secret-3317"}`, map[string]string{"X-Request-Id": "req-42.a/b"})
	do("GET", "/tokens/"+tok["id"].(string), "", map[string]string{"Traceparent": traceparent})
	do("GET", "/tokens/"+tok["id"].(string), "", map[string]string{"X-Request-Id": strings.Repeat("x", 129), "Traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"})
	events := tap.Events()[before:]
	if got := typesOf(events); !slices.Equal(got, []string{"token.created", "token.read", "token.read"}) {
		t.Fatalf("events over HTTP: %v", got)
	}
	for i, want := range []string{"req-42.a/b", "4bf92f3577b34da6a3ce929d0e0e4736", ""} {
		ev := events[i]
		if ev.Info.TraceID != want {
			t.Errorf("%s: trace_id %q, want %q", ev.Info.Type, ev.Info.TraceID, want)
		}
		if strings.Contains(string(ev.JSON), "over-http-secret-3317") {
			t.Errorf("%s carries the token's data", ev.Info.Type)
		}
		if d := dataOf(t, ev); d.fields["id"] != tok["id"] || d.actor.ID != reader.ID {
			t.Errorf("%s: object %v, actor %+v", ev.Info.Type, d.fields, d.actor)
		}
	}
	if !strings.Contains(string(events[0].JSON), `"trace_id":"req-42.a/b"`) {
		t.Errorf("token.created = %s", events[0].JSON)
	}

	// Through the Go client, with client.WithRequestID.
	c := client.New(srv.URL, nil)
	before = len(tap.Events())
	mustDo(t, "client DeleteToken", c.DeleteToken(client.WithRequestID(ctx, "client-7"), reader.Key, tok["id"].(string)))
	events = tap.Events()[before:]
	if len(events) != 1 || events[0].Info.Type != tokenvault.EventTokenDeleted || events[0].Info.TraceID != "client-7" {
		t.Fatalf("events of the client's delete: %+v", events)
	}
	if d := dataOf(t, events[0]); d.fields["id"] != tok["id"] || d.actor.ID != reader.ID {
		t.Errorf("token.deleted: object %v, actor %+v", d.fields, d.actor)
	}
}
