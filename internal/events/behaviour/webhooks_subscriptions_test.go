package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// TestTokenizeCommitReadsNoWebhooks: on every store, the write
// transaction of a tokenize reads no webhook record, no pending-delivery
// index entry and no application record, whether its tenant has no
// webhook or one that subscribes (its events are still queued to it).
func TestTokenizeCommitReadsNoWebhooks(t *testing.T) {
	t.Parallel()
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			w := &vaulttest.WatchStore{}
			e := vaulttest.NewEnvOn(t, w.Wrap(sk.Open(t)))
			tap := vaulttest.TapEvents(e.V)
			rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
			tid := e.Boot.Tenant.ID
			key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate).Key
			ctx := vaulttest.Watched(context.Background())
			tokenize := func() {
				t.Helper()
				if _, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: "secret-data-42"}); err != nil {
					t.Fatal(err)
				}
			}
			hooks := "tenant/" + tid + "/webhook/"
			forbidden := []string{hooks, "tenant/" + tid + "/idx/wh-p/", "tenant/" + tid + "/application/"}
			check := func(what string, n int, allowed ...string) {
				t.Helper()
				updates, reads := w.Take()
				if updates < n {
					t.Fatalf("%s: %d tokenizes ran %d write transactions, want %d or more", what, n, updates, n)
				}
				for _, r := range reads {
					for _, f := range forbidden {
						if !slices.Contains(allowed, f) && strings.HasPrefix(r, f) {
							t.Errorf("%s: a tokenize's write transaction read %s", what, r)
						}
					}
				}
			}
			watch := func(what string) {
				t.Helper()
				w.Take()
				// The first after a webhook change reads the tenant's
				// webhooks once (and authenticates its key from the
				// store); no pending index, even with no count yet.
				tokenize()
				check(what+", first call", 1, hooks, forbidden[2])
				// Past the time a count of pending deliveries is
				// trusted, nothing is counted in a commit either.
				e.Clock.Advance(2 * time.Minute)
				for range 3 {
					tokenize()
				}
				check(what, 3)
			}
			watch("no webhook")
			if n := len(tap.Events()); n != 0 {
				t.Fatalf("%d events without a webhook", n)
			}

			hook, err := e.V.CreateWebhook(context.Background(), e.Mgmt, tokenvault.WebhookRequest{
				Name: "hook", URL: rcv.URL, Events: []string{tokenvault.EventTokenCreated}})
			if err != nil {
				t.Fatal(err)
			}
			watch("a subscribed webhook")
			events := tap.Events()
			if len(events) != 4 {
				t.Fatalf("%d events queued with a subscribed webhook, want 4", len(events))
			}
			for _, ev := range events {
				if ev.Info.Type != tokenvault.EventTokenCreated || !slices.Equal(ev.Targets, []string{hook.ID}) {
					t.Errorf("event %s to %v, want token.created to [%s]", ev.Info.Type, ev.Targets, hook.ID)
				}
				if !strings.Contains(string(ev.Info.Data), `"name":"private app"`) {
					t.Errorf("event data %s does not name its application", ev.Info.Data)
				}
			}
		})
	}
}

// vaultPair is two Vaults on one store, as two server processes would
// be: each with its own store handle and caches.
type vaultPair struct {
	name string
	open func(t *testing.T) (a, b store.Store)
}

// vaultPairs are the stores two Vaults can share: PostgreSQL (when
// TOKENVAULT_TEST_POSTGRES_DSN is set), two connection pools on one
// schema; and a memory store seen as shared (vaulttest.SharedStore: no
// SingleProcess marker, no generation counter), on which a Vault caches
// no subscriptions.
func vaultPairs() []vaultPair {
	pairs := []vaultPair{{"memory-shared", func(t *testing.T) (store.Store, store.Store) {
		m := memory.New()
		t.Cleanup(func() { m.Close() })
		return vaulttest.SharedStore{Store: m}, vaulttest.SharedStore{Store: m}
	}}}
	if vaulttest.PGDSN != "" {
		pairs = append(pairs, vaultPair{"postgres", func(t *testing.T) (store.Store, store.Store) {
			schema := vaulttest.FreshPGSchema(t)
			var out [2]store.Store
			for i := range out {
				s, err := postgres.Open(context.Background(), vaulttest.PGDSN, &postgres.Options{Schema: schema})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				if err := s.Migrate(context.Background()); err != nil {
					t.Fatal(err)
				}
				out[i] = s
			}
			return out[0], out[1]
		}})
	}
	return pairs
}

// openPair opens a Vault on each of a and b, with one master key, on the
// real clock, and bootstraps a tenant through the first.
func openPair(t *testing.T, a, b store.Store) (va, vb *tokenvault.Vault, boot *tokenvault.TenantBootstrap) {
	t.Helper()
	key := vaulttest.NewMasterKey()
	var vs [2]*tokenvault.Vault
	for i, s := range []store.Store{a, b} {
		v, err := tokenvault.Open(context.Background(), tokenvault.Options{
			Store:     s,
			Now:       time.Now,
			Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
			Keys:      tokenvault.KeyOptions{MasterKey: key},
			Retention: tokenvault.RetentionOptions{SweepInterval: -1},
			Outbound:  tokenvault.OutboundOptions{AllowPrivateDestinations: true},
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { v.Close() })
		vs[i] = v
	}
	boot, err := vs[0].CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
		Name: "Acme", Owner: tokenvault.User{Email: "owner@example.com", FirstName: "Olive"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0], vs[1], boot
}

// TestWebhookChangeReachesOtherVault: a webhook created, disabled,
// subscribed to other events, subscribed again and deleted through one
// Vault changes what another Vault on the same store emits for its very
// next tokenize after the change returned; so does an application's new
// name, which events name their actor by.
func TestWebhookChangeReachesOtherVault(t *testing.T) {
	t.Parallel()
	for _, pair := range vaultPairs() {
		t.Run("store="+pair.name, func(t *testing.T) {
			a, b := pair.open(t)
			va, vb, boot := openPair(t, a, b)
			tap := vaulttest.TapEvents(vb)
			ctx := context.Background()
			rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
			app, err := va.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "tokenizer", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
			if err != nil {
				t.Fatal(err)
			}
			// step tokenizes through B and fails unless it emitted an
			// event to want (or none, for "").
			seen := 0
			step := func(what, want string) {
				t.Helper()
				if _, err := vb.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret-data-42"}); err != nil {
					t.Fatalf("%s: CreateToken: %v", what, err)
				}
				events := tap.Events()
				got := events[seen:]
				seen = len(events)
				switch {
				case want == "" && len(got) != 0:
					t.Errorf("%s: B emitted %d events to %v, want none", what, len(got), got[0].Targets)
				case want != "" && (len(got) != 1 || !slices.Equal(got[0].Targets, []string{want})):
					t.Errorf("%s: B emitted %+v, want one event to %s", what, got, want)
				}
			}
			step("no webhook yet", "")
			req := tokenvault.WebhookRequest{Name: "hook", URL: rcv.URL, Events: []string{tokenvault.EventTokenCreated}}
			hook, err := va.CreateWebhook(ctx, boot.Application.Key, req)
			if err != nil {
				t.Fatal(err)
			}
			step("created through A", hook.ID)
			step("created through A, again", hook.ID)
			// The actor's name comes with B's cached key: renaming the
			// application through A changes it in B's next event.
			if !strings.Contains(string(tap.Events()[seen-1].Info.Data), `"name":"tokenizer"`) {
				t.Errorf("event data %s does not name the application", tap.Events()[seen-1].Info.Data)
			}
			if _, err := va.UpdateApplication(ctx, boot.Application.Key, app.ID, tokenvault.UpdateApplicationRequest{
				Name: "tokenizer 2", Permissions: []string{tokenvault.PermTokenCreate}}); err != nil {
				t.Fatal(err)
			}
			step("application renamed through A", hook.ID)
			if data := string(tap.Events()[seen-1].Info.Data); !strings.Contains(data, `"name":"tokenizer 2"`) {
				t.Errorf("after a rename through A, B's event names its actor as in %s, want tokenizer 2", data)
			}
			update := func(what string, adjust func(*tokenvault.WebhookRequest), want string) {
				t.Helper()
				r := req
				adjust(&r)
				if _, err := va.UpdateWebhook(ctx, boot.Application.Key, hook.ID, r); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				step(what, want)
			}
			update("disabled through A", func(r *tokenvault.WebhookRequest) { r.Status = tokenvault.WebhookDisabled }, "")
			update("enabled for token.deleted only", func(r *tokenvault.WebhookRequest) {
				r.Events = []string{tokenvault.EventTokenDeleted}
			}, "")
			update("subscribed again to token.created", func(r *tokenvault.WebhookRequest) {
				r.Events = []string{tokenvault.EventTokenDeleted, tokenvault.EventTokenCreated}
			}, hook.ID)
			if err := va.DeleteWebhook(ctx, boot.Application.Key, hook.ID); err != nil {
				t.Fatal(err)
			}
			step("deleted through A", "")
		})
	}
}

// TestWebhookCreatedOverHTTPDeliversNextTokenize: over HTTP, a webhook
// created through one instance receives the event of the next tokenize
// through another instance on the same store.
func TestWebhookCreatedOverHTTPDeliversNextTokenize(t *testing.T) {
	t.Parallel()
	for _, pair := range vaultPairs() {
		t.Run("store="+pair.name, func(t *testing.T) {
			a, b := pair.open(t)
			va, vb, boot := openPair(t, a, b)
			srvA := httptest.NewServer(httpapi.New(va, httpapi.Options{}))
			t.Cleanup(srvA.Close)
			srvB := httptest.NewServer(httpapi.New(vb, httpapi.Options{}))
			t.Cleanup(srvB.Close)
			ca, cb := client.New(srvA.URL, nil), client.New(srvB.URL, nil)
			ctx := context.Background()
			rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
			app, err := ca.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "tokenizer", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
			if err != nil {
				t.Fatal(err)
			}
			// B has served the tenant (and cached that it has no
			// webhook) before the webhook exists.
			if _, err := cb.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "before"}); err != nil {
				t.Fatal(err)
			}
			hook, err := ca.CreateWebhook(ctx, boot.Application.Key, tokenvault.WebhookRequest{
				Name: "hook", URL: rcv.URL, Events: []string{tokenvault.EventTokenCreated}})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := cb.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "after"})
			if err != nil {
				t.Fatal(err)
			}
			vaulttest.WaitUntil(t, "the event at the receiver", func() bool { return len(rcv.Got()) >= 1 })
			got := rcv.Got()
			if len(got) != 1 || !strings.Contains(string(got[0].Body), `"type":"token.created"`) ||
				!strings.Contains(string(got[0].Body), tok.ID) {
				t.Fatalf("the receiver got %d requests, first %s; want token.created of %s", len(got), got[0].Body, tok.ID)
			}
			if id := got[0].Header.Get("webhook-id"); id == "" {
				t.Errorf("delivery to %s has no webhook-id header", hook.ID)
			}
		})
	}
}
