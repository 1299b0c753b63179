package tokens_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// wantAccess is what one access line should say.
type wantAccess struct {
	actor, channel, transform string
}

// accessFixture is a card of a data subject (metadata customer=c1) whose
// data was accessed every way there is, each by a known key, a second
// apart: GET revealed, masked and redacted, detokenized, sent through a
// proxy and to a reactor, searched and listed. want is the answer,
// newest first.
type accessFixture struct {
	e    *vaulttest.Env
	card *tokenvault.Token
	want []wantAccess
}

func newAccessFixture(t *testing.T, e *vaulttest.Env) *accessFixture {
	t.Helper()
	req := vaulttest.CardRequest(vaulttest.Visa)
	req.Metadata = map[string]string{"customer": "c1"}
	card := e.Token(t, req)
	revealer := e.Reader(t, "reveal", "token:read", "token:search", "token:use")
	masker := e.Reader(t, "mask", "token:read")
	redacter := e.Reader(t, "redact", "token:read")
	f := &accessFixture{e: e, card: card}
	step := func(who *tokenvault.Application, channel, transform string, do func() error) {
		t.Helper()
		e.Clock.Advance(time.Second)
		if err := do(); err != nil {
			t.Fatalf("%s by %s: %v", channel, who.Name, err)
		}
		f.want = append([]wantAccess{{who.ID, channel, transform}}, f.want...)
	}
	get := func(a *tokenvault.Application) func() error {
		return func() error { _, err := e.V.GetToken(ctx, a.Key, card.ID); return err }
	}
	step(revealer, tokenvault.ChannelGet, tokenvault.TransformReveal, get(revealer))
	step(masker, tokenvault.ChannelGet, tokenvault.TransformMask, get(masker))
	step(redacter, tokenvault.ChannelGet, tokenvault.TransformRedact, get(redacter))
	step(revealer, tokenvault.ChannelDetokenize, tokenvault.TransformReveal, func() error {
		_, err := e.V.Detokenize(ctx, revealer.Key, map[string]any{"n": "{{" + card.ID + "}}"})
		return err
	})
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	step(revealer, tokenvault.ChannelProxy, tokenvault.TransformReveal, func() error {
		_, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, revealer.Key, "/charges", `{"card": "{{`+card.ID+`}}"}`))
		return err
	})
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode, Configuration: map[string]any{}})
	step(revealer, tokenvault.ChannelReactor, tokenvault.TransformReveal, func() error {
		_, err := e.V.InvokeReactor(ctx, revealer.Key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"c": "{{" + card.ID + "}}"}})
		return err
	})
	step(revealer, tokenvault.ChannelSearch, tokenvault.TransformReveal, func() error {
		page, err := e.V.SearchTokens(ctx, revealer.Key, tokenvault.SearchTokensRequest{Query: "metadata.customer:c1"})
		if err == nil && len(page.Data) != 1 {
			err = fmt.Errorf("found %d tokens", len(page.Data))
		}
		return err
	})
	step(masker, tokenvault.ChannelList, tokenvault.TransformMask, func() error {
		page, err := e.V.ListTokens(ctx, masker.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"customer": "c1"}})
		if err == nil && len(page.Data) != 1 {
			err = fmt.Errorf("listed %d tokens", len(page.Data))
		}
		return err
	})
	return f
}

// check holds got, newest first, to want.
func checkAccess(t *testing.T, got []tokenvault.TokenAccess, tokenID string, want []wantAccess) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d accesses, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		w := want[i]
		if a.TokenID != tokenID || a.ActorID != w.actor || a.ActorType != tokenvault.ActorApplication ||
			a.ApplicationID != w.actor || a.Channel != w.channel || a.Transform != w.transform || a.ID == "" || a.CreatedAt.IsZero() {
			t.Errorf("access %d = %+v, want %+v of token %s", i, a, w, tokenID)
		}
		if i > 0 && !a.CreatedAt.Before(got[i-1].CreatedAt) {
			t.Errorf("access %d at %v is not older than the one before (%v)", i, a.CreatedAt, got[i-1].CreatedAt)
		}
	}
}

// TestTokenAccessListsEveryAccess: GET /tokens/{id}/access in process,
// on every store: each access with its actor, application, channel and
// transform, newest first (not the token's creation); another tenant's
// token is NotFound; a key without token:access:read, a private key
// among them, is PermissionDenied; pages by cursor see each line once.
func TestTokenAccessListsEveryAccess(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		f := newAccessFixture(t, e)
		page, err := e.V.TokenAccess(ctx, e.Mgmt, f.card.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkAccess(t, page.Data, f.card.ID, f.want)
		if page.Pagination.After != "" {
			t.Errorf("one page of %d has After %q", len(page.Data), page.Pagination.After)
		}

		other := e.Tenant(t, "Other")
		_, err = e.V.TokenAccess(ctx, other.Application.Key, f.card.ID)
		vaulttest.WantKind(t, "TokenAccess of another tenant's token", err, tokenvault.NotFound)
		_, err = e.V.TokenAccess(ctx, e.Mgmt, "00000000-0000-0000-0000-000000000000")
		vaulttest.WantKind(t, "TokenAccess of no token", err, tokenvault.NotFound)
		_, err = e.V.TokenAccess(ctx, e.MgmtWith(t, tokenvault.PermLogRead), f.card.ID)
		vaulttest.WantKind(t, "TokenAccess without token:access:read", err, tokenvault.PermissionDenied)
		_, err = e.V.TokenAccess(ctx, e.User(t), f.card.ID)
		vaulttest.WantKind(t, "TokenAccess with a private key", err, tokenvault.PermissionDenied)
		_, err = e.V.TokenAccessPage(ctx, e.Mgmt, f.card.ID, tokenvault.PageRequest{Page: 2})
		vaulttest.WantField(t, err, "page")
		_, err = e.V.TokenAccessPage(ctx, e.Mgmt, f.card.ID, tokenvault.PageRequest{Start: "bm90IGEgY3Vyc29y"})
		vaulttest.WantField(t, err, "start")

		// By cursor, three at a time.
		var all []tokenvault.TokenAccess
		req := tokenvault.PageRequest{Size: 3}
		for calls := 0; ; calls++ {
			if calls > 3 {
				t.Fatal("the walk does not end")
			}
			p, err := e.V.TokenAccessPage(ctx, e.Mgmt, f.card.ID, req)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Data...)
			if p.Pagination.After == "" {
				break
			}
			if len(p.Data) != 3 || p.Pagination.TotalItems != 4 {
				t.Errorf("a middle page: %d accesses, %+v", len(p.Data), p.Pagination)
			}
			req.Start = p.Pagination.After
		}
		checkAccess(t, all, f.card.ID, f.want)
	})
}

// TestSubjectAccessMergesTheSubjectsTokens: the accesses of every token
// with the subject's metadata, merged newest first and paged by cursor;
// another subject's tokens are not in it; no metadata is Invalid, and so
// is metadata more than MaxSubjectTokens tokens have.
func TestSubjectAccessMergesTheSubjectsTokens(t *testing.T) {
	e := vaulttest.NewEnv(t)
	f := newAccessFixture(t, e)
	reader := e.Reader(t, "reveal", "token:read")
	second := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada", Metadata: map[string]string{"customer": "C1"}})
	stranger := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Bob", Metadata: map[string]string{"customer": "c2"}})
	for _, id := range []string{second.ID, stranger.ID} {
		e.Clock.Advance(time.Second)
		if _, err := e.V.GetToken(ctx, reader.Key, id); err != nil {
			t.Fatal(err)
		}
	}
	want := append([]wantAccess{{reader.ID, tokenvault.ChannelGet, tokenvault.TransformReveal}}, f.want...)
	var all []tokenvault.TokenAccess
	req := tokenvault.SubjectAccessRequest{Metadata: map[string]string{"customer": "c1"}, PageRequest: tokenvault.PageRequest{Size: 4}}
	for calls := 0; ; calls++ {
		if calls > 3 {
			t.Fatal("the walk does not end")
		}
		p, err := e.V.SubjectAccess(ctx, e.Mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Tokens) != 2 {
			t.Errorf("tokens = %v, want the card and the second token", p.Tokens)
		}
		all = append(all, p.Data...)
		if p.Pagination.After == "" {
			break
		}
		req.Start = p.Pagination.After
	}
	if len(all) != len(want) || all[0].TokenID != second.ID {
		t.Fatalf("%d accesses, first %+v; want %d, first of %s", len(all), all[0], len(want), second.ID)
	}
	checkAccess(t, all[1:], f.card.ID, want[1:])

	_, err := e.V.SubjectAccess(ctx, e.Mgmt, tokenvault.SubjectAccessRequest{})
	vaulttest.WantField(t, err, "metadata")
	_, err = e.V.SubjectAccess(ctx, e.MgmtWith(t, tokenvault.PermLogRead), tokenvault.SubjectAccessRequest{Metadata: map[string]string{"customer": "c1"}})
	vaulttest.WantKind(t, "SubjectAccess without token:access:read", err, tokenvault.PermissionDenied)
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	body := make([]any, tokenvault.MaxSubjectTokens+1)
	for i := range body {
		body[i] = fmt.Sprint("v", i)
	}
	for i := range body {
		if _, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: body[i], Metadata: map[string]string{"customer": "many"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.V.SubjectAccess(ctx, e.Mgmt, tokenvault.SubjectAccessRequest{Metadata: map[string]string{"customer": "many"}})
	vaulttest.WantField(t, err, "metadata")
}

// TestTokenAccessReadsTheTokensOwnLines: a token read 50 times among
// 4,000 other tokens' lines is answered from its own lines: a page of 20
// reads a small multiple of its size from the store, not the log.
func TestTokenAccessReadsTheTokensOwnLines(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := vaulttest.NewEnvOn(t, cs)
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]any, 2_000)
	for i := range body {
		body[i] = fmt.Sprint("other ", i)
	}
	for range 2 {
		if _, err := e.V.Tokenize(ctx, app.Key, body); err != nil {
			t.Fatal(err)
		}
		for range 25 {
			if _, err := e.V.GetToken(ctx, app.Key, tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.SettleChain(t)
	cctx, counted := storetest.Counted(ctx) // the call's reads, not the background's beside it
	p, err := e.V.TokenAccessPage(cctx, e.Mgmt, tok.ID, tokenvault.PageRequest{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	reads := counted()
	if reads > 3*20+40 || reads == 0 {
		t.Errorf("a page of 20 accesses read %d entries, with 4,000 lines in the log", reads)
	}
	t.Logf("a page of 20 accesses read %d entries", reads)
	if len(p.Data) != 20 || p.Pagination.After == "" {
		t.Errorf("page: %d accesses, %+v", len(p.Data), p.Pagination)
	}
}

// TestTokenAccessNamesSessionsAndDeduplicatedCreates: a session's read
// names the session and the private application that authorized it; a
// create that deduplicated to the token is an access of channel create.
func TestTokenAccessNamesSessionsAndDeduplicatedCreates(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.Revealer(t, "token:create", "token:read")
	req := vaulttest.CardRequest(vaulttest.Visa)
	req.DeduplicateToken = true
	card, err := e.V.CreateToken(ctx, creator.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Second)
	again, err := e.V.CreateToken(ctx, creator.Key, req)
	if err != nil || again.ID != card.ID {
		t.Fatalf("deduplicated create = %+v, %v; want %s", again, err, card.ID)
	}
	// A create answers a card masked, even to a revealing key.
	if b, _ := json.Marshal(again.Data); strings.Contains(string(b), vaulttest.Visa) || again.Data == nil {
		t.Fatalf("the deduplicated create returned %s, want the mask", b)
	}
	s := e.Session(t)
	auth := e.Authorizer(t)
	if err := e.V.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Second)
	if _, err := e.V.GetToken(ctx, s.SessionKey, card.ID); err != nil {
		t.Fatal(err)
	}
	page, err := e.V.TokenAccess(ctx, e.Mgmt, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 {
		t.Fatalf("%d accesses, want 2: %+v", len(page.Data), page.Data)
	}
	if a := page.Data[0]; a.ActorType != tokenvault.ActorSession || a.ActorID == "" || a.ApplicationID != auth.ID ||
		a.Channel != tokenvault.ChannelGet || a.Transform != tokenvault.TransformMask {
		t.Errorf("the session's read = %+v, want actor a session, application %s", a, auth.ID)
	}
	if a := page.Data[1]; a.ActorID != creator.ID || a.ApplicationID != creator.ID || a.Channel != tokenvault.ChannelCreate ||
		a.Transform != tokenvault.TransformMask {
		t.Errorf("the deduplicated create = %+v", a)
	}
}
