package client_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// parity is one Vault, called in process and through a client over HTTP.
type parity struct {
	v    *tokenvault.Vault
	c    *client.Client
	mgmt tokenvault.Credential // a management key
	user tokenvault.Credential // a private key that creates, reads and uses tokens
}

func newParity(t *testing.T) *parity {
	t.Helper()
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	t.Cleanup(srv.Close)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUse}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &parity{v: v, c: client.New(srv.URL, nil), mgmt: boot.Application.Key, user: app.Key}
}

// kindOf describes err by what a caller tells errors apart by.
func kindOf(err error) string {
	var e *tokenvault.Error
	if !errors.As(err, &e) {
		return fmt.Sprint(err)
	}
	return fmt.Sprintf("%v status=%d fields=%v body=%v", e.Kind, e.Status, e.Fields, e.Body)
}

// TestCodeErrorsKeepTheirKind: an error of tenant code is CodeFailed
// through the client too, with the status and fields it had in process
// (it was Internal, Invalid or NotFound by its status alone).
func TestCodeErrorsKeepTheirKind(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	for _, code := range []string{
		`throw new Error("boom")`,
		`throw new BadRequestError("bad input")`,
		`throw new CustomHttpResponseError({status: 400, body: {x: 1}})`,
		`throw new CustomHttpResponseError({status: 404, body: "nope", headers: {"Content-Type": "text/plain"}})`,
	} {
		r, err := p.v.CreateReactor(ctx, p.mgmt, tokenvault.CreateReactorRequest{Name: "r",
			Code: "module.exports = async () => { " + code + " }", Configuration: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		_, inProcess := p.v.InvokeReactor(ctx, p.user, r.ID, tokenvault.InvokeReactorRequest{})
		_, remote := p.c.InvokeReactor(ctx, p.user, r.ID, tokenvault.InvokeReactorRequest{})
		if tokenvault.ErrorKind(remote) != tokenvault.CodeFailed || kindOf(remote) != kindOf(inProcess) {
			t.Errorf("%s:\n in process %s\n client     %s", code, kindOf(inProcess), kindOf(remote))
		}
	}
	px, err := p.v.CreateProxy(ctx, p.mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "http://127.0.0.1:1",
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async () => { throw new Error("boom") }`}})
	if err != nil {
		t.Fatal(err)
	}
	call := tokenvault.ProxyCall{ProxyKey: px.Key, APIKey: p.user, Method: "POST", Path: "/x",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{}`)}
	_, inProcess := p.v.InvokeProxy(ctx, call)
	_, remote := p.c.InvokeProxy(ctx, call)
	if tokenvault.ErrorKind(remote) != tokenvault.CodeFailed || tokenvault.ErrorKind(inProcess) != tokenvault.CodeFailed {
		t.Errorf("a throwing transform: in process %s, client %s", kindOf(inProcess), kindOf(remote))
	}
}

// TestIDsThatAreNoSegment: an id that is empty, "." or "..", or "key" for
// an application, or ends in "/", names nothing through the client either;
// the server would have cleaned the path and answered another route (an
// application list, the tenant, the caller's own application).
func TestIDsThatAreNoSegment(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	app, err := p.v.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenRead}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", ".", "..", "key", app.ID + "/"} {
		if got, err := p.c.GetApplication(ctx, p.mgmt, id); tokenvault.ErrorKind(err) != tokenvault.NotFound {
			t.Errorf("GetApplication(%q) = %+v, %v; want NotFound", id, got, err)
		}
		if got, err := p.c.GetInvitation(ctx, p.mgmt, id); tokenvault.ErrorKind(err) != tokenvault.NotFound {
			t.Errorf("GetInvitation(%q) = %+v, %v; want NotFound", id, got, err)
		}
		if err := p.c.DeleteApplication(ctx, p.mgmt, id); tokenvault.ErrorKind(err) != tokenvault.NotFound {
			t.Errorf("DeleteApplication(%q) = %v; want NotFound", id, err)
		}
	}
	if _, err := p.c.GetApplication(ctx, p.mgmt, app.ID); err != nil {
		t.Errorf("GetApplication(its id): %v", err)
	}
}

// TestValuesArriveAsSent: what the client sends is what the Vault reads in
// process: numbers past 2^53, instants in a zone whose offset has seconds,
// and page errors, each named.
func TestValuesArriveAsSent(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	req := tokenvault.TokenRequest{Type: "token", Data: map[string]any{"n": int64(1<<60 + 1)}}
	local := time.Now().Add(time.Hour).Truncate(time.Second).In(time.FixedZone("LMT", 1172))
	req.ExpiresAt = &local
	inProcess, err := p.v.CreateToken(ctx, p.user, req)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := p.c.CreateToken(ctx, p.user, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []*tokenvault.Token{inProcess, remote} {
		got, err := p.v.GetToken(ctx, p.user, tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := fmt.Sprint(got.Data.(map[string]any)["n"]); n != "1152921504606846977" || !got.ExpiresAt.Equal(local) {
			t.Errorf("token %s: n %s, expires %v; want 1152921504606846977 and %v", tok.ID, n, got.ExpiresAt, local)
		}
	}

	start := time.Now().Add(-time.Minute).In(time.FixedZone("X", 30))
	logsIn, err := p.v.ListLogs(ctx, p.mgmt, tokenvault.ListLogsRequest{StartDate: &start})
	if err != nil {
		t.Fatal(err)
	}
	logsRemote, err := p.c.ListLogs(ctx, p.mgmt, tokenvault.ListLogsRequest{StartDate: &start})
	if err != nil || logsRemote.Pagination.TotalItems != logsIn.Pagination.TotalItems {
		t.Errorf("ListLogs from a +00:00:30 start: %d lines in process, %+v, %v through the client", logsIn.Pagination.TotalItems, logsRemote, err)
	}

	bad := tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Page: -1, Size: -1}}
	_, errIn := p.v.ListApplications(ctx, p.mgmt, bad)
	_, errRemote := p.c.ListApplications(ctx, p.mgmt, bad)
	var in, remoteErr *tokenvault.Error
	if !errors.As(errIn, &in) || !errors.As(errRemote, &remoteErr) || !cmp.Equal(in.Fields, remoteErr.Fields) {
		t.Errorf("page -1, size -1: in process %v, client %v", errIn, errRemote)
	}
}

// TestProxyKeysAreTheCallsFields: a key in ProxyCall.Header is neither read
// nor forwarded, through the client as in process; the call's fields are
// the keys.
func TestProxyKeysAreTheCallsFields(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	seen := make(chan http.Header, 2)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		io.WriteString(w, "ok")
	}))
	defer dest.Close()
	px, err := p.v.CreateProxy(ctx, p.mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: dest.URL})
	if err != nil {
		t.Fatal(err)
	}
	call := tokenvault.ProxyCall{ProxyKey: px.Key, Method: "GET", Path: "/a", Header: http.Header{"Svc-Api-Key": {string(p.user)}}}
	_, inProcess := p.v.InvokeProxy(ctx, call)
	_, remote := p.c.InvokeProxy(ctx, call)
	for _, err := range []error{inProcess, remote} {
		if tokenvault.ErrorKind(err) != tokenvault.Unauthenticated {
			t.Errorf("a key only in Header: in process %v, client %v; want Unauthenticated", inProcess, remote)
		}
	}
	call.APIKey = p.user
	if _, err := p.c.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("with APIKey: %v", err)
	}
	if h := <-seen; slices.ContainsFunc([]string{"Svc-Api-Key", "Svc-Proxy-Key"}, func(k string) bool { return h.Get(k) != "" }) {
		t.Errorf("the destination got a key: %v", h)
	}
}

// TestProxyMethods: a method httpapi has no /proxy route for is Invalid,
// naming "method", in process and through the client (which got the
// server's 405 back as if the destination had answered it); "" is GET.
func TestProxyMethods(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	methods := make(chan string, 4)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods <- r.Method
	}))
	defer dest.Close()
	px, err := p.v.CreateProxy(ctx, p.mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: dest.URL, RequireAuth: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"OPTIONS", "get", "TRACE", "CONNECT"} {
		call := tokenvault.ProxyCall{ProxyKey: px.Key, Method: m, Path: "/a"}
		_, inProcess := p.v.InvokeProxy(ctx, call)
		_, remote := p.c.InvokeProxy(ctx, call)
		for _, err := range []error{inProcess, remote} {
			var e *tokenvault.Error
			if !errors.As(err, &e) || e.Kind != tokenvault.Invalid || len(e.Fields["method"]) == 0 {
				t.Errorf("method %q: in process %v, client %v; want Invalid naming method", m, inProcess, remote)
			}
		}
	}
	for _, invoke := range []func(context.Context, tokenvault.ProxyCall) (*tokenvault.ProxyResponse, error){p.v.InvokeProxy, p.c.InvokeProxy} {
		if _, err := invoke(ctx, tokenvault.ProxyCall{ProxyKey: px.Key, Path: "/a"}); err != nil {
			t.Fatalf("no method: %v", err)
		}
		if m := <-methods; m != "GET" {
			t.Errorf("no method reached the destination as %s, want GET", m)
		}
	}
}
