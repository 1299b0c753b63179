package tokenvault_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
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
	e    *env
	card *tokenvault.Token
	want []wantAccess
}

func newAccessFixture(t *testing.T, e *env) *accessFixture {
	t.Helper()
	req := cardRequest(visa)
	req.Metadata = map[string]string{"customer": "c1"}
	card := e.token(t, req)
	revealer := e.reader(t, "reveal", "token:read", "token:search", "token:use")
	masker := e.reader(t, "mask", "token:read")
	redacter := e.reader(t, "redact", "token:read")
	f := &accessFixture{e: e, card: card}
	step := func(who *tokenvault.Application, channel, transform string, do func() error) {
		t.Helper()
		e.clock.Advance(time.Second)
		if err := do(); err != nil {
			t.Fatalf("%s by %s: %v", channel, who.Name, err)
		}
		f.want = append([]wantAccess{{who.ID, channel, transform}}, f.want...)
	}
	get := func(a *tokenvault.Application) func() error {
		return func() error { _, err := e.v.GetToken(ctx, a.Key, card.ID); return err }
	}
	step(revealer, tokenvault.ChannelGet, tokenvault.TransformReveal, get(revealer))
	step(masker, tokenvault.ChannelGet, tokenvault.TransformMask, get(masker))
	step(redacter, tokenvault.ChannelGet, tokenvault.TransformRedact, get(redacter))
	step(revealer, tokenvault.ChannelDetokenize, tokenvault.TransformReveal, func() error {
		_, err := e.v.Detokenize(ctx, revealer.Key, map[string]any{"n": "{{" + card.ID + "}}"})
		return err
	})
	d := newDestination(t)
	p := e.proxy(t, tokenvault.ProxyRequest{DestinationURL: d.srv.URL})
	step(revealer, tokenvault.ChannelProxy, tokenvault.TransformReveal, func() error {
		_, err := e.v.InvokeProxy(ctx, jsonCall(p.Key, revealer.Key, "/charges", `{"card": "{{`+card.ID+`}}"}`))
		return err
	})
	r := e.reactor(t, tokenvault.CreateReactorRequest{Code: echoCode, Configuration: map[string]any{}})
	step(revealer, tokenvault.ChannelReactor, tokenvault.TransformReveal, func() error {
		_, err := e.v.InvokeReactor(ctx, revealer.Key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"c": "{{" + card.ID + "}}"}})
		return err
	})
	step(revealer, tokenvault.ChannelSearch, tokenvault.TransformReveal, func() error {
		page, err := e.v.SearchTokens(ctx, revealer.Key, tokenvault.SearchTokensRequest{Query: "metadata.customer:c1"})
		if err == nil && len(page.Data) != 1 {
			err = fmt.Errorf("found %d tokens", len(page.Data))
		}
		return err
	})
	step(masker, tokenvault.ChannelList, tokenvault.TransformMask, func() error {
		page, err := e.v.ListTokens(ctx, masker.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"customer": "c1"}})
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
	forEachStore(t, func(t *testing.T, e *env) {
		f := newAccessFixture(t, e)
		page, err := e.v.TokenAccess(ctx, e.mgmt, f.card.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkAccess(t, page.Data, f.card.ID, f.want)
		if page.Pagination.After != "" {
			t.Errorf("one page of %d has After %q", len(page.Data), page.Pagination.After)
		}

		other := e.tenant(t, "Other")
		_, err = e.v.TokenAccess(ctx, other.Application.Key, f.card.ID)
		wantKind(t, "TokenAccess of another tenant's token", err, tokenvault.NotFound)
		_, err = e.v.TokenAccess(ctx, e.mgmt, "00000000-0000-0000-0000-000000000000")
		wantKind(t, "TokenAccess of no token", err, tokenvault.NotFound)
		_, err = e.v.TokenAccess(ctx, e.mgmtWith(t, tokenvault.PermLogRead), f.card.ID)
		wantKind(t, "TokenAccess without token:access:read", err, tokenvault.PermissionDenied)
		_, err = e.v.TokenAccess(ctx, e.user(t), f.card.ID)
		wantKind(t, "TokenAccess with a private key", err, tokenvault.PermissionDenied)
		_, err = e.v.TokenAccessPage(ctx, e.mgmt, f.card.ID, tokenvault.PageRequest{Page: 2})
		wantField(t, err, "page")
		_, err = e.v.TokenAccessPage(ctx, e.mgmt, f.card.ID, tokenvault.PageRequest{Start: "bm90IGEgY3Vyc29y"})
		wantField(t, err, "start")

		// By cursor, three at a time.
		var all []tokenvault.TokenAccess
		req := tokenvault.PageRequest{Size: 3}
		for calls := 0; ; calls++ {
			if calls > 3 {
				t.Fatal("the walk does not end")
			}
			p, err := e.v.TokenAccessPage(ctx, e.mgmt, f.card.ID, req)
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
	e := newEnv(t)
	f := newAccessFixture(t, e)
	reader := e.reader(t, "reveal", "token:read")
	second := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada", Metadata: map[string]string{"customer": "C1"}})
	stranger := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "Bob", Metadata: map[string]string{"customer": "c2"}})
	for _, id := range []string{second.ID, stranger.ID} {
		e.clock.Advance(time.Second)
		if _, err := e.v.GetToken(ctx, reader.Key, id); err != nil {
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
		p, err := e.v.SubjectAccess(ctx, e.mgmt, req)
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

	_, err := e.v.SubjectAccess(ctx, e.mgmt, tokenvault.SubjectAccessRequest{})
	wantField(t, err, "metadata")
	_, err = e.v.SubjectAccess(ctx, e.mgmtWith(t, tokenvault.PermLogRead), tokenvault.SubjectAccessRequest{Metadata: map[string]string{"customer": "c1"}})
	wantKind(t, "SubjectAccess without token:access:read", err, tokenvault.PermissionDenied)
	app := e.app(t, tokenvault.Private, "token:create", "token:read")
	body := make([]any, tokenvault.MaxSubjectTokens+1)
	for i := range body {
		body[i] = fmt.Sprint("v", i)
	}
	for i := range body {
		if _, err := e.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: body[i], Metadata: map[string]string{"customer": "many"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.v.SubjectAccess(ctx, e.mgmt, tokenvault.SubjectAccessRequest{Metadata: map[string]string{"customer": "many"}})
	wantField(t, err, "metadata")
}

// TestTokenAccessReadsTheTokensOwnLines: a token read 50 times among
// 4,000 other tokens' lines is answered from its own lines: a page of 20
// reads a small multiple of its size from the store, not the log.
func TestTokenAccessReadsTheTokensOwnLines(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := newEnvOn(t, cs)
	app := e.app(t, tokenvault.Private, "token:create", "token:read")
	tok, err := e.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]any, 2_000)
	for i := range body {
		body[i] = fmt.Sprint("other ", i)
	}
	for range 2 {
		if _, err := e.v.Tokenize(ctx, app.Key, body); err != nil {
			t.Fatal(err)
		}
		for range 25 {
			if _, err := e.v.GetToken(ctx, app.Key, tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	settleChain(t, e.v)
	before := cs.Reads()
	p, err := e.v.TokenAccessPage(ctx, e.mgmt, tok.ID, tokenvault.PageRequest{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	reads := cs.Reads() - before
	if reads > 3*20+40 {
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
	e := newEnv(t)
	creator := e.revealer(t, "token:create", "token:read")
	req := cardRequest(visa)
	req.DeduplicateToken = true
	card, err := e.v.CreateToken(ctx, creator.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	again, err := e.v.CreateToken(ctx, creator.Key, req)
	if err != nil || again.ID != card.ID {
		t.Fatalf("deduplicated create = %+v, %v; want %s", again, err, card.ID)
	}
	// A create answers a card masked, even to a revealing key.
	if b, _ := json.Marshal(again.Data); strings.Contains(string(b), visa) || again.Data == nil {
		t.Fatalf("the deduplicated create returned %s, want the mask", b)
	}
	s := e.session(t)
	auth := e.authorizer(t)
	if err := e.v.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	if _, err := e.v.GetToken(ctx, s.SessionKey, card.ID); err != nil {
		t.Fatal(err)
	}
	page, err := e.v.TokenAccess(ctx, e.mgmt, card.ID)
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
