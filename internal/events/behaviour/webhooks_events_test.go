package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The events every change emits (internal/events' emit.go, webhooks_emit.go),
// seen through the Vault's event tap (TapEvents): what a committed
// transaction queued for which webhooks. Webhooks are stored directly
// (PutTestWebhook).

// mailbox is a Mailer that keeps the invitations it was asked to send.
type mailbox struct {
	mu    sync.Mutex
	mails []tokenvault.InvitationMail
}

func (m *mailbox) SendInvitation(_ context.Context, mail tokenvault.InvitationMail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mails = append(m.mails, mail)
	return nil
}

func (m *mailbox) last() tokenvault.InvitationMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mails[len(m.mails)-1]
}

// eventRun is a Vault driven through every kind of change, with a
// webhook subscribed to every event type by name.
type eventRun struct {
	e    *vaulttest.Env
	tap  *vaulttest.EventTap
	hook string
	// secrets are values no event may carry.
	secrets []string
	// ids names objects of the run, for the checks.
	ids map[string]string
}

// catalogueNames is every event type but webhook.test (which the test
// endpoint sends, not a change).
func catalogueNames() []string {
	var out []string
	for _, et := range tokenvault.WebhookEventTypes() {
		if et.Name != tokenvault.EventWebhookTest {
			out = append(out, et.Name)
		}
	}
	return out
}

// newEventEnv is a Vault on bolt (so reads may be appended, appends.go),
// with a mailbox, a one-minute cvc retention and an event tap.
func newEventEnv(t *testing.T) (*vaulttest.Env, *mailbox, *vaulttest.EventTap) {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mail := &mailbox{}
	e := vaulttest.NewEnvOn(t, s, func(o *tokenvault.Options) {
		o.Mailer = mail
		o.Retention.CVC = time.Minute
		o.Outbound.WebhookBackoff = time.Millisecond
		o.SubjectKeys = memory.New()
	})
	return e, mail, vaulttest.TapEvents(e.V)
}

func expect[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func mustDo(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// fullRun drives the public API through every change of the catalogue,
// for a webhook subscribed to every type but webhook.test, stored
// directly (PutTestWebhook).
func fullRun(t *testing.T) *eventRun {
	t.Helper()
	return fullRunTo(t, func(e *vaulttest.Env) (string, string) {
		hook, whsec, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, catalogueNames(), true)
		mustDo(t, "PutTestWebhook", err)
		return hook, whsec
	})
}

// fullRunTo is fullRun for the webhook subscribe makes, which returns its
// id and signing secret.
func fullRunTo(t *testing.T, subscribe func(*vaulttest.Env) (id, secret string)) *eventRun {
	t.Helper()
	e, mail, tap := newEventEnv(t)
	hook, whsec := subscribe(e)
	r := &eventRun{e: e, tap: tap, hook: hook, ids: map[string]string{}}
	r.secrets = append(r.secrets, string(e.Mgmt), whsec)
	plant := func(s ...string) { r.secrets = append(r.secrets, s...) }

	// Applications and keys.
	rules := []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
		Permissions: []string{"token:create", "token:read", "token:update", "token:delete", "token:search", "token:use"}}}
	app := expect[*tokenvault.Application](t, "CreateApplication")(e.V.CreateApplication(ctx, e.Mgmt,
		tokenvault.CreateApplicationRequest{Name: "backend", Type: tokenvault.Private, Rules: rules, Permissions: []string{"token-intent:delete"}}))
	plant(string(app.Key))
	r.ids["app"] = app.ID
	expect[*tokenvault.Application](t, "UpdateApplication")(e.V.UpdateApplication(ctx, e.Mgmt, app.ID,
		tokenvault.UpdateApplicationRequest{Name: "backend 2", Rules: rules, Permissions: []string{"token-intent:delete"}}))
	app = expect[*tokenvault.Application](t, "RegenerateApplicationKey")(e.V.RegenerateApplicationKey(ctx, e.Mgmt, app.ID))
	plant(string(app.Key))
	key := app.Key
	spare := expect[*tokenvault.Application](t, "CreateApplication")(e.V.CreateApplication(ctx, e.Mgmt,
		tokenvault.CreateApplicationRequest{Name: "spare", Type: tokenvault.Private, Permissions: []string{"token:read"}}))
	plant(string(spare.Key))
	mustDo(t, "DeleteApplication", e.V.DeleteApplication(ctx, e.Mgmt, spare.ID))
	r.ids["spare"] = spare.ID
	expect[*tokenvault.Tenant](t, "SetPurposes")(e.V.SetPurposes(ctx, e.Mgmt, tokenvault.SetPurposesRequest{
		Purposes: []tokenvault.Purpose{{Name: "fraud-review", Description: "Reviewing a flagged payment"}}}))
	// A data subject erased: its token deleted first (token.deleted is
	// the application's), its key then destroyed (subject.erased).
	subjectTok := expect[*tokenvault.Token](t, "CreateToken(subject)")(e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "subject's", Subject: "subject-1"}))
	mustDo(t, "DeleteToken(subject)", e.V.DeleteToken(ctx, key, subjectTok.ID))
	r.ids["erasure"] = expect[*tokenvault.ErasureCertificate](t, "EraseSubject")(e.V.EraseSubject(ctx, e.Mgmt, "subject-1")).ID

	// Approvals: a policy of 1 of 2 approvers on widened grants; one
	// change applied, one rejected, one failed, one expired, and the
	// policy's removal approved.
	var approverIDs []string
	var approverKeys []tokenvault.Credential
	for _, name := range []string{"approver 1", "approver 2"} {
		ap := expect[*tokenvault.Application](t, "CreateApplication")(e.V.CreateApplication(ctx, e.Mgmt,
			tokenvault.CreateApplicationRequest{Name: name, Type: tokenvault.Management, Permissions: []string{"tenant:read"}}))
		plant(string(ap.Key))
		approverIDs, approverKeys = append(approverIDs, ap.ID), append(approverKeys, ap.Key)
	}
	held := expect[*tokenvault.Application](t, "CreateApplication")(e.V.CreateApplication(ctx, e.Mgmt,
		tokenvault.CreateApplicationRequest{Name: "held", Type: tokenvault.Private, Permissions: []string{"token:create"}}))
	plant(string(held.Key))
	expect[*tokenvault.ApprovalPolicy](t, "SetApprovalPolicy")(e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 1,
		Approvers: approverIDs, Operations: []string{tokenvault.ApprovalWidenGrants}, TTLSeconds: 3600}))
	widen := func(name string, perms ...string) string {
		_, err := e.V.UpdateApplication(ctx, e.Mgmt, held.ID, tokenvault.UpdateApplicationRequest{Name: name, Permissions: perms})
		var ar *tokenvault.ApprovalRequired
		if !errors.As(err, &ar) {
			t.Fatalf("UpdateApplication (widen) = %v, want *ApprovalRequired", err)
		}
		return ar.Change.ID
	}
	approved := widen("held", "token:create", "token:read")
	expect[*tokenvault.PendingChange](t, "ApproveChange")(e.V.ApproveChange(ctx, approverKeys[0], approved))
	rejected := widen("held", "token:create", "token:read", "token:search")
	expect[*tokenvault.PendingChange](t, "RejectChange")(e.V.RejectChange(ctx, approverKeys[1], rejected, "no"))
	stale := widen("held", "token:create", "token:read", "token:use")
	expect[*tokenvault.Application](t, "UpdateApplication")(e.V.UpdateApplication(ctx, e.Mgmt, held.ID,
		tokenvault.UpdateApplicationRequest{Name: "held again", Permissions: []string{"token:create", "token:read"}}))
	if _, err := e.V.ApproveChange(ctx, approverKeys[0], stale); !errors.Is(err, tokenvault.ErrConflict) {
		t.Fatalf("ApproveChange of a stale change = %v, want Conflict", err)
	}
	expired := widen("held again", "token:create", "token:read", "token:delete")
	e.Clock.Advance(2 * time.Hour)
	if _, err := e.V.ApproveChange(ctx, approverKeys[0], expired); !errors.Is(err, tokenvault.ErrConflict) {
		t.Fatalf("ApproveChange of an expired change = %v, want Conflict", err)
	}
	_, errRemove := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{})
	var removal *tokenvault.ApprovalRequired
	if !errors.As(errRemove, &removal) {
		t.Fatalf("SetApprovalPolicy (remove) = %v, want *ApprovalRequired", errRemove)
	}
	expect[*tokenvault.PendingChange](t, "ApproveChange")(e.V.ApproveChange(ctx, approverKeys[1], removal.Change.ID))

	// Tokens.
	const number, cvc = "4111111111111111", "7391"
	plant(number)
	cardReq := tokenvault.TokenRequest{Type: tokenvault.TypeCard, DeduplicateToken: true, Metadata: map[string]string{"order": "o-1"},
		Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2035, "cvc": cvc[:3]}}
	card := expect[*tokenvault.Token](t, "CreateToken card")(e.V.CreateToken(ctx, key, cardReq))
	r.ids["card"] = card.ID
	expect[*tokenvault.Token](t, "CreateToken duplicate")(e.V.CreateToken(ctx, key, cardReq))
	const data = "zebra-secret-data-8841"
	plant(data)
	tok := expect[*tokenvault.Token](t, "CreateToken")(e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: data,
		Metadata: map[string]string{"k": "v"}}))
	r.ids["token"] = tok.ID
	expect[*tokenvault.Token](t, "GetToken")(e.V.GetToken(ctx, key, tok.ID))
	expect[*tokenvault.Page[tokenvault.Token]](t, "ListTokens")(e.V.ListTokens(ctx, key, tokenvault.ListTokensRequest{}))
	expect[*tokenvault.Page[tokenvault.Token]](t, "SearchTokens")(e.V.SearchTokens(ctx, key, tokenvault.SearchTokensRequest{Query: "type:card"}))
	detok := expect[any](t, "Detokenize")(e.V.Detokenize(ctx, key, map[string]any{"n": "{{ " + card.ID + " | json: '$.number' }}", "d": "{{ " + tok.ID + " }}"}))
	if b, _ := json.Marshal(detok); !strings.Contains(string(b), number) || !strings.Contains(string(b), data) {
		t.Fatalf("Detokenize = %s", b)
	}
	expect[*tokenvault.Token](t, "UpdateToken")(e.V.UpdateToken(ctx, key, tok.ID, json.RawMessage(`{"metadata": {"k": "v2"}}`)))
	mustDo(t, "DeleteToken", e.V.DeleteToken(ctx, key, tok.ID))
	in := e.Clock.Now().Add(time.Hour)
	const expiring = "expiring-secret-5150"
	plant(expiring)
	exp := expect[*tokenvault.Token](t, "CreateToken expiring")(e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: expiring, ExpiresAt: &in}))
	r.ids["expiring"] = exp.ID

	// Token intents.
	pub := expect[*tokenvault.Application](t, "CreateApplication public")(e.V.CreateApplication(ctx, e.Mgmt,
		tokenvault.CreateApplicationRequest{Name: "browser", Type: tokenvault.Public, Permissions: []string{"token:create"}}))
	plant(string(pub.Key))
	const intentNumber = "5555555555554444"
	plant(intentNumber)
	intentCard := map[string]any{"number": intentNumber, "expiration_month": 11, "expiration_year": 2034, "cvc": "482"}
	newIntent := func() *tokenvault.TokenIntent {
		return expect[*tokenvault.TokenIntent](t, "CreateTokenIntent")(e.V.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: intentCard}))
	}
	converted := newIntent()
	fromIntent := expect[*tokenvault.Token](t, "CreateToken from intent")(e.V.CreateToken(ctx, key, tokenvault.TokenRequest{TokenIntentID: converted.ID}))
	r.ids["converted"], r.ids["fromIntent"] = converted.ID, fromIntent.ID
	deleted := newIntent()
	mustDo(t, "DeleteTokenIntent", e.V.DeleteTokenIntent(ctx, key, deleted.ID))
	r.ids["deletedIntent"] = deleted.ID
	r.ids["expiredIntent"] = newIntent().ID

	// Sessions.
	s := expect[*tokenvault.Session](t, "CreateSession")(e.V.CreateSession(ctx, pub.Key))
	plant(string(s.SessionKey), s.Nonce)
	mustDo(t, "AuthorizeSession", e.V.AuthorizeSession(ctx, key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:create"}}))

	// Proxies.
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(dest.Close)
	const proxyConf, proxyQuery = "proxy-config-secret-5521", "proxy-query-secret-7781"
	plant(proxyConf, proxyQuery)
	px := expect[*tokenvault.Proxy](t, "CreateProxy")(e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "pay",
		DestinationURL: dest.URL + "/charge?api_key=" + proxyQuery, Configuration: map[string]any{"api_secret": proxyConf}}))
	plant(px.Key)
	r.ids["proxy"] = px.ID
	expect[*tokenvault.Proxy](t, "UpdateProxy")(e.V.UpdateProxy(ctx, e.Mgmt, px.ID, tokenvault.ProxyRequest{Name: "pay 2",
		DestinationURL: dest.URL + "/charge?api_key=" + proxyQuery, Configuration: map[string]any{"api_secret": proxyConf}}))
	expect[*tokenvault.ProxyResponse](t, "InvokeProxy")(e.V.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: px.Key, APIKey: key, Method: "POST", Path: "/x",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"n": "{{ ` + card.ID + ` | json: '$.number' }}"}`)}))
	mustDo(t, "DeleteProxy", e.V.DeleteProxy(ctx, e.Mgmt, px.ID))

	// Reactors: one synchronous invocation, one asynchronous that
	// succeeds, one that fails (with the card number in its message).
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(callback.Close)
	const reactorConf = "reactor-config-secret-9931"
	plant(reactorConf)
	rx := expect[*tokenvault.Reactor](t, "CreateReactor")(e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "charge",
		Code: `module.exports = async (req) => ({raw: {last4: req.args.n.slice(-4)}})`, Configuration: map[string]any{"api_secret": reactorConf}}))
	r.ids["reactor"] = rx.ID
	expect[*tokenvault.Reactor](t, "UpdateReactor")(e.V.UpdateReactor(ctx, e.Mgmt, rx.ID, tokenvault.UpdateReactorRequest{Name: "charge 2",
		Code: `module.exports = async (req) => ({raw: {last4: req.args.n.slice(-4)}})`, Configuration: map[string]any{"api_secret": reactorConf}}))
	args := map[string]any{"n": "{{ " + card.ID + " | json: '$.number' }}"}
	expect[*tokenvault.ReactorResponse](t, "InvokeReactor")(e.V.InvokeReactor(ctx, key, rx.ID, tokenvault.InvokeReactorRequest{Args: args}))
	async := expect[*tokenvault.ReactorResponse](t, "InvokeReactor async")(e.V.InvokeReactor(ctx, key, rx.ID, tokenvault.InvokeReactorRequest{Args: args, CallbackURL: callback.URL}))
	r.ids["completed"] = async.InvocationID
	failing := expect[*tokenvault.Reactor](t, "CreateReactor failing")(e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "fails",
		Code: `module.exports = async (req) => { throw new Error("declined " + req.args.n) }`}))
	failed := expect[*tokenvault.ReactorResponse](t, "InvokeReactor failing")(e.V.InvokeReactor(ctx, key, failing.ID, tokenvault.InvokeReactorRequest{Args: args, CallbackURL: callback.URL}))
	r.ids["failed"] = failed.InvocationID
	r.waitFor(t, tokenvault.EventReactorCompleted, tokenvault.EventReactorFailed)
	mustDo(t, "DeleteReactor", e.V.DeleteReactor(ctx, e.Mgmt, rx.ID))

	// Invitations and members.
	inv := expect[*tokenvault.Invitation](t, "CreateInvitation")(e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"}))
	plant(mail.last().Token)
	expect[*tokenvault.Invitation](t, "ResendInvitation")(e.V.ResendInvitation(ctx, e.Mgmt, inv.ID))
	plant(mail.last().Token)
	r.ids["accepted"] = inv.ID
	member := expect[*tokenvault.TenantMember](t, "AcceptInvitation")(e.V.AcceptInvitation(ctx, mail.last().Token, tokenvault.User{Email: "ada@example.com"}))
	r.ids["member"] = member.ID
	mustDo(t, "DeleteMember", e.V.DeleteMember(ctx, e.Mgmt, member.ID))
	gone := expect[*tokenvault.Invitation](t, "CreateInvitation")(e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "bob@example.com"}))
	plant(mail.last().Token)
	mustDo(t, "DeleteInvitation", e.V.DeleteInvitation(ctx, e.Mgmt, gone.ID))
	r.ids["goneInvitation"] = gone.ID
	r.ids["expiredInvitation"] = expect[*tokenvault.Invitation](t, "CreateInvitation")(e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "cy@example.com"})).ID
	plant(mail.last().Token)

	// A decoy planted as the backend's, read by it: access.anomaly (the
	// decoy does not freeze, so the backend goes on working).
	const bait = "decoy-secret-6620"
	plant(bait)
	decoy := expect[*tokenvault.Decoy](t, "CreateDecoy")(e.V.CreateDecoy(ctx, e.Mgmt, tokenvault.CreateDecoyRequest{ApplicationID: app.ID,
		Token: tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: bait}, Freeze: new(false)}))
	r.ids["decoy"] = decoy.ID
	expect[*tokenvault.Token](t, "GetToken decoy")(e.V.GetToken(ctx, key, decoy.ID))

	// An export, and one cut off after it began.
	recipient, err := age.GenerateX25519Identity()
	mustDo(t, "GenerateX25519Identity", err)
	exportReq := tokenvault.ExportRequest{Recipient: recipient.Recipient().String()}
	exported := expect[*tokenvault.ExportManifest](t, "ExportTokens")(e.V.ExportTokens(ctx, e.Mgmt, exportReq, io.Discard))
	r.ids["export"] = exported.ID
	if _, err := e.V.ExportTokens(ctx, e.Mgmt, exportReq, brokenWriter{}); err == nil {
		t.Fatal("ExportTokens to a broken writer went ahead")
	}

	// The sweeper: the token's and intent's expiry, the invitation's, the
	// card's cvc.
	e.Clock.Advance(tokenvault.InvitationLifetime + time.Hour)
	expect[int](t, "Sweep")(e.V.Sweep(ctx))
	for _, m := range mail.mails {
		if m.AcceptURL != "" {
			plant(m.AcceptURL)
		}
	}
	return r
}

// waitFor waits (up to 30 s) until the tap has seen events of every type
// of types.
func (r *eventRun) waitFor(t *testing.T, types ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := map[string]bool{}
		for _, ev := range r.tap.Events() {
			seen[ev.Info.Type] = true
		}
		missing := slices.DeleteFunc(slices.Clone(types), func(typ string) bool { return seen[typ] })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event of %v after 30 s", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventData is an event's data: its object by name, and its actor.
type eventData struct {
	object string
	fields map[string]any
	actor  tokenvault.WebhookActor
}

func dataOf(t *testing.T, ev vaulttest.TappedEvent) eventData {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Info.Data, &m); err != nil || len(m) != 2 {
		t.Fatalf("event %s data = %s (%v), want an object and an actor", ev.Info.Type, ev.Info.Data, err)
	}
	var d eventData
	for k, raw := range m {
		if k == "actor" {
			if err := json.Unmarshal(raw, &d.actor); err != nil {
				t.Fatal(err)
			}
			continue
		}
		d.object = k
		if err := json.Unmarshal(raw, &d.fields); err != nil {
			t.Fatalf("event %s: %s is %s", ev.Info.Type, k, raw)
		}
	}
	return d
}

// TestEventsOfEveryChange drives the API through every change and finds
// every event type of the catalogue (webhook.test aside), each naming
// the right object and actor, for the subscribed webhook, in tap order.
func TestEventsOfEveryChange(t *testing.T) {
	r := fullRun(t)
	tid := r.e.Boot.Tenant.ID
	// The object each type carries, and who made the change: "app" is the
	// private application, "mgmt" the management one, "pub" the public
	// one, "user" the invitee, "system" the sweeper.
	want := map[string]struct{ object, actor string }{
		"token.created": {"token", "app"}, "token.updated": {"token", "app"}, "token.deleted": {"token", "app"},
		"token.expired": {"token", "system"}, "token.property.expired": {"token", "system"}, "token.read": {"token", "app"},
		"token-intent.created": {"token_intent", "pub"}, "token-intent.deleted": {"token_intent", ""}, "token-intent.converted": {"token_intent", "app"},
		"application.created": {"application", "mgmt"}, "application.updated": {"application", "mgmt"}, "application.deleted": {"application", "mgmt"},
		"application.key.created": {"application", "mgmt"}, "application.key.deleted": {"application", "mgmt"},
		"proxy.created": {"proxy", "mgmt"}, "proxy.updated": {"proxy", "mgmt"}, "proxy.deleted": {"proxy", "mgmt"}, "proxy.invoked": {"proxy", "app"},
		"reactor.created": {"reactor", "mgmt"}, "reactor.updated": {"reactor", "mgmt"}, "reactor.deleted": {"reactor", "mgmt"},
		"reactor.invoked": {"invocation", "app"}, "reactor.completed": {"invocation", "app"}, "reactor.failed": {"invocation", "app"},
		"session.created": {"session", "pub"}, "session.authorized": {"session", "app"},
		"tenant.member.created": {"member", "user"}, "tenant.member.deleted": {"member", "mgmt"},
		"tenant.invitation.created": {"invitation", "mgmt"}, "tenant.invitation.resent": {"invitation", "mgmt"},
		"tenant.invitation.accepted": {"invitation", "user"}, "tenant.invitation.deleted": {"invitation", ""},
		"tenant.purposes.updated": {"tenant", "mgmt"},
		"subject.erased":          {"certificate", "mgmt"},
		"access.anomaly":          {"anomaly", "app"},
		"approval.requested":      {"approval", "mgmt"}, "approval.approved": {"approval", ""}, "approval.applied": {"approval", ""},
		"approval.rejected": {"approval", ""}, "approval.expired": {"approval", "system"}, "approval.failed": {"approval", ""},
		"export.completed": {"export", "mgmt"}, "export.failed": {"export", "mgmt"},
	}
	seen := map[string]int{}
	for _, ev := range r.tap.Events() {
		typ := ev.Info.Type
		seen[typ]++
		w, ok := want[typ]
		if !ok {
			t.Errorf("unexpected event %s", ev.JSON)
			continue
		}
		if ev.TenantID != tid || ev.Info.TenantID != tid || !slices.Equal(ev.Targets, []string{r.hook}) || ev.Info.ID == "" || ev.Info.Timestamp.IsZero() {
			t.Errorf("event %s: tenant %s, targets %v; want tenant %s, targets [%s]", ev.JSON, ev.TenantID, ev.Targets, tid, r.hook)
		}
		if len(ev.JSON) > 20<<10 {
			t.Errorf("event %s is %d bytes", typ, len(ev.JSON))
		}
		d := dataOf(t, ev)
		if d.object != w.object {
			t.Errorf("event %s carries %q, want %q", typ, d.object, w.object)
		}
		switch w.actor {
		case "app":
			if d.actor.Type != tokenvault.ActorApplication || d.actor.ID != r.ids["app"] || d.actor.Name != "backend 2" {
				t.Errorf("event %s actor = %+v, want the backend application", typ, d.actor)
			}
		case "mgmt":
			if d.actor.Type != tokenvault.ActorApplication || d.actor.ID != r.e.Boot.Application.ID || d.actor.Name == "" {
				t.Errorf("event %s actor = %+v, want the management application", typ, d.actor)
			}
		case "pub":
			if d.actor.Type != tokenvault.ActorApplication || d.actor.Name != "browser" {
				t.Errorf("event %s actor = %+v, want the browser application", typ, d.actor)
			}
		case "user":
			if d.actor.Type != tokenvault.ActorUser || d.actor.ID == "" {
				t.Errorf("event %s actor = %+v, want the invitee", typ, d.actor)
			}
		case "system":
			if d.actor.Type != tokenvault.ActorSystem || d.actor.ID != "" {
				t.Errorf("event %s actor = %+v, want the system", typ, d.actor)
			}
		}
		high := typ == "token.read" || typ == "proxy.invoked" || typ == "reactor.invoked" || typ == "reactor.completed" || typ == "reactor.failed"
		if (ev.Info.Sequence == 0) != high {
			t.Errorf("event %s has sequence %d", typ, ev.Info.Sequence)
		}
	}
	for _, typ := range catalogueNames() {
		if seen[typ] == 0 {
			t.Errorf("no %s event", typ)
		}
	}
	// Particular objects.
	r.wantObject(t, "token.expired", "id", r.ids["expiring"])
	r.wantObject(t, "token.property.expired", "id", r.ids["card"])
	r.wantObject(t, "token.property.expired", "property", "cvc")
	r.wantObject(t, "token.deleted", "id", r.ids["token"])
	r.wantObject(t, "token-intent.converted", "id", r.ids["converted"])
	r.wantObject(t, "token-intent.converted", "token_id", r.ids["fromIntent"])
	r.wantObject(t, "application.deleted", "id", r.ids["spare"])
	r.wantObject(t, "proxy.deleted", "id", r.ids["proxy"])
	r.wantObject(t, "reactor.deleted", "id", r.ids["reactor"])
	r.wantObject(t, "reactor.completed", "id", r.ids["completed"])
	r.wantObject(t, "reactor.completed", "status", "succeeded")
	r.wantObject(t, "reactor.failed", "id", r.ids["failed"])
	r.wantObject(t, "reactor.failed", "status", "failed")
	r.wantObject(t, "tenant.invitation.accepted", "id", r.ids["accepted"])
	r.wantObject(t, "tenant.member.deleted", "id", r.ids["member"])
	r.wantObject(t, "tenant.purposes.updated", "id", tid)
	r.wantObject(t, "access.anomaly", "token_id", r.ids["decoy"])
	r.wantObject(t, "access.anomaly", "reason", "decoy")
	r.wantObject(t, "export.completed", "id", r.ids["export"])
	// Three intents deleted or expired: one by a caller, one by the sweeper.
	if seen["token-intent.deleted"] != 2 || seen["tenant.invitation.deleted"] != 2 {
		t.Errorf("token-intent.deleted %d times, tenant.invitation.deleted %d times; want 2 each", seen["token-intent.deleted"], seen["tenant.invitation.deleted"])
	}
	r.wantObject(t, "tenant.invitation.deleted", "id", r.ids["expiredInvitation"])
	r.wantObject(t, "token-intent.deleted", "id", r.ids["expiredIntent"])
	// The key's regeneration: two fingerprints, the new one different.
	oldKey, newKey := r.first(t, "application.key.deleted"), r.first(t, "application.key.created")
	if oldKey["key_fingerprint"] == "" || oldKey["key_fingerprint"] == newKey["key_fingerprint"] || oldKey["id"] != r.ids["app"] {
		t.Errorf("key events: deleted %v, created %v", oldKey, newKey)
	}
	// One token.read per token read: the duplicate create, get, list
	// (three tokens then), search, detokenize (two), proxy, three
	// invocations.
	if n := seen["token.read"]; n < 11 {
		t.Errorf("%d token.read events, want at least 11", n)
	}
}

// first is the object of the first event of type typ.
func (r *eventRun) first(t *testing.T, typ string) map[string]any {
	t.Helper()
	for _, ev := range r.tap.Events() {
		if ev.Info.Type == typ {
			return dataOf(t, ev).fields
		}
	}
	t.Fatalf("no %s event", typ)
	return nil
}

// wantObject checks that some event of type typ has field equal to want.
func (r *eventRun) wantObject(t *testing.T, typ, field, want string) {
	t.Helper()
	var got []any
	for _, ev := range r.tap.Events() {
		if ev.Info.Type == typ {
			v := dataOf(t, ev).fields[field]
			if v == want {
				return
			}
			got = append(got, v)
		}
	}
	t.Errorf("%s events have %s %v, want one with %q", typ, field, got, want)
}

// TestEventsCarryNoSecret plants distinctive secrets through a full run
// (card numbers, cvc, token data, API keys, the webhook's secret, a
// session key and nonce, invitation link tokens and URLs, a proxy key,
// proxy and reactor configuration secrets, the query of a proxy's
// destination, detokenized values) and finds none of them in any event.
func TestEventsCarryNoSecret(t *testing.T) {
	r := fullRun(t)
	events := r.tap.Events()
	if len(events) < 40 {
		t.Fatalf("only %d events", len(events))
	}
	for _, ev := range events {
		s := string(ev.JSON)
		for _, secret := range r.secrets {
			if secret != "" && strings.Contains(s, secret) {
				t.Errorf("event %s carries the secret %q", ev.Info.Type, secret)
			}
		}
		// No field of the object is one that holds a secret (the card's
		// cvc is three digits, too short to search for).
		d := dataOf(t, ev)
		for _, k := range fieldNames(d.fields) {
			switch k {
			case "data", "mask", "cvc", "number", "nonce", "key", "key_hash", "code", "configuration", "session_key", "secret", "token", "accept_url":
				t.Errorf("event %s: its %s has a field %q: %s", ev.Info.Type, d.object, k, ev.JSON)
			}
		}
	}
}

// fieldNames lists the names of the fields of v, at any depth.
func fieldNames(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out = append(out, k)
			out = append(out, fieldNames(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, fieldNames(x)...)
		}
	}
	return out
}

// TestEventSequencePerObject: the events of one object carry sequence
// numbers that grow in commit order; events of high volume carry none.
func TestEventSequencePerObject(t *testing.T) {
	r := fullRun(t)
	last := map[string]int64{}
	var n int
	for _, ev := range r.tap.Events() {
		if ev.Info.Sequence == 0 {
			continue
		}
		d := dataOf(t, ev)
		id, _ := d.fields["id"].(string)
		obj := d.object + "/" + id
		if ev.Info.Sequence <= last[obj] {
			t.Errorf("%s of %s has sequence %d after %d", ev.Info.Type, obj, ev.Info.Sequence, last[obj])
		}
		last[obj] = ev.Info.Sequence
		n++
	}
	tokenSeq := r.sequences(t, "token/"+r.ids["token"])
	if !slices.Equal(tokenSeq.types, []string{"token.created", "token.updated", "token.deleted"}) || !slices.IsSorted(tokenSeq.seqs) {
		t.Errorf("token events %v with sequences %v", tokenSeq.types, tokenSeq.seqs)
	}
	app := r.sequences(t, "application/"+r.ids["app"])
	if !slices.Equal(app.types, []string{"application.created", "application.updated", "application.key.deleted", "application.key.created"}) || !slices.IsSorted(app.seqs) {
		t.Errorf("application events %v with sequences %v", app.types, app.seqs)
	}
}

type objectEvents struct {
	types []string
	seqs  []int64
}

// sequences lists the sequenced events of object ("<name>/<id>").
func (r *eventRun) sequences(t *testing.T, object string) objectEvents {
	var out objectEvents
	for _, ev := range r.tap.Events() {
		d := dataOf(t, ev)
		if id, _ := d.fields["id"].(string); ev.Info.Sequence != 0 && d.object+"/"+id == object {
			out.types = append(out.types, ev.Info.Type)
			out.seqs = append(out.seqs, ev.Info.Sequence)
		}
	}
	return out
}

// TestEventSequenceCountersEndWithTheirObjects: after a full run, only the
// objects still alive keep a sequence counter: deletions, expiries, a
// conversion, an acceptance and a session's sweeping removed theirs.
func TestEventSequenceCountersEndWithTheirObjects(t *testing.T) {
	r := fullRun(t)
	got, err := vaulttest.EventSequenceObjects(ctx, r.e.V, r.e.Boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	alive := map[string]bool{}
	for _, ev := range r.tap.Events() {
		if ev.Info.Sequence == 0 {
			continue
		}
		d := dataOf(t, ev)
		id, _ := d.fields["id"].(string)
		alive[id] = true
	}
	for _, gone := range []string{"token", "expiring", "converted", "deletedIntent", "expiredIntent", "spare", "proxy", "reactor", "member",
		"accepted", "goneInvitation", "expiredInvitation"} {
		delete(alive, r.ids[gone])
	}
	// The session, swept.
	delete(alive, r.first(t, "session.created")["id"].(string))
	var want []string
	for _, obj := range got {
		_, id, _ := strings.Cut(obj, "/")
		if !alive[id] {
			t.Errorf("a counter is left for %s", obj)
		}
		want = append(want, id)
	}
	for _, must := range []string{r.ids["card"], r.ids["fromIntent"], r.ids["app"]} {
		if !slices.Contains(want, must) {
			t.Errorf("no counter for the live object %s (counters %v)", must, got)
		}
	}
}

// brokenWriter fails every write: a receiver gone.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("the receiver went away") }
