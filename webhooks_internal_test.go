package tokenvault

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/store/memory"
)

// hookClock is a clock the test moves.
type hookClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *hookClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *hookClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.at = c.at.Add(d) }

// webhookVault opens a Vault on a clock the test moves, with a webhook
// overlap of an hour, and creates a tenant.
func webhookVault(t *testing.T) (*Vault, *hookClock, *TenantBootstrap) {
	t.Helper()
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	clock := &hookClock{at: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	v, err := Open(ctx, Options{Store: memory.New(), Now: clock.Now, Keys: KeyOptions{MasterKey: mk},
		Retention: RetentionOptions{SweepInterval: -1}, Webhooks: WebhookOptions{SecretOverlap: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	return v, clock, boot
}

// storedWebhook reads webhook id of tenant tid as stored.
func storedWebhook(t *testing.T, v *Vault, tid, id string) *events.Webhook {
	t.Helper()
	var rec *events.Webhook
	err := v.view(context.Background(), func(tx *txn) error {
		var err error
		rec, err = events.Get(tx.Tx, tid, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestWebhookRotationKeepsThePrevious: a rotation keeps the secret it
// replaces as the previous one, until now plus SecretOverlap; a second
// rotation within the overlap keeps only the secret it replaces, so the
// first stops signing at once.
func TestWebhookRotationKeepsThePrevious(t *testing.T) {
	v, clock, boot := webhookVault(t)
	ctx, tid := context.Background(), boot.Tenant.ID
	w, err := v.CreateWebhook(ctx, boot.Application.Key, WebhookRequest{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := storedWebhook(t, v, tid, w.ID)
	if rec.Secret != w.Secret || rec.PreviousSecret != "" || !rec.PreviousUntil.IsZero() {
		t.Fatalf("after creation: secret %v, previous %q until %v", rec.Secret == w.Secret, rec.PreviousSecret, rec.PreviousUntil)
	}
	clock.Advance(10 * time.Minute)
	first, err := v.RotateWebhookSecret(ctx, boot.Application.Key, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec = storedWebhook(t, v, tid, w.ID)
	if rec.Secret != first.Secret || rec.PreviousSecret != w.Secret || !rec.PreviousUntil.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("after a rotation: new secret kept %v, previous is the old %v, until %v (want %v)",
			rec.Secret == first.Secret, rec.PreviousSecret == w.Secret, rec.PreviousUntil, clock.Now().Add(time.Hour))
	}
	clock.Advance(30 * time.Minute)
	second, err := v.RotateWebhookSecret(ctx, boot.Application.Key, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec = storedWebhook(t, v, tid, w.ID)
	if rec.Secret != second.Secret || rec.PreviousSecret != first.Secret || !rec.PreviousUntil.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("after a rotation within the overlap: previous is the first rotation's %v, until %v",
			rec.PreviousSecret == first.Secret, rec.PreviousUntil)
	}
	if rec.Secret == w.Secret || rec.PreviousSecret == w.Secret {
		t.Error("the creation's secret still signs after two rotations")
	}
}

// TestWebhookReenableClearsFailures: a PUT that enables a webhook the
// Vault disabled clears why and since when it failed; disabling keeps
// none, and an update that leaves a failing webhook enabled keeps its
// failing_since (the dispatcher's count of the failure).
func TestWebhookReenableClearsFailures(t *testing.T) {
	v, clock, boot := webhookVault(t)
	ctx, tid, key := context.Background(), boot.Tenant.ID, boot.Application.Key
	req := WebhookRequest{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}}
	w, err := v.CreateWebhook(ctx, key, req)
	if err != nil {
		t.Fatal(err)
	}
	failing := clock.Now()
	setState := func(status, reason string) {
		t.Helper()
		err := v.update(ctx, func(tx *txn) error {
			rec, err := events.Get(tx.Tx, tid, w.ID)
			if err != nil {
				return err
			}
			rec.Status, rec.DisabledReason, rec.FailingSince = status, reason, failing
			return tx.PutRecord(barrier.Tenant(tid).Record(EntityWebhook, w.ID), rec)
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	setState(WebhookEnabled, "")
	if _, err := v.UpdateWebhook(ctx, key, w.ID, req); err != nil {
		t.Fatal(err)
	}
	if rec := storedWebhook(t, v, tid, w.ID); !rec.FailingSince.Equal(failing) {
		t.Errorf("an update of an enabled webhook cleared failing_since: %+v", rec)
	}

	setState(WebhookDisabled, "failing")
	got, err := v.GetWebhook(ctx, key, w.ID)
	if err != nil || got.Status != WebhookDisabled || got.DisabledReason != "failing" {
		t.Errorf("a webhook the Vault disabled reads %+v, %v", got, err)
	}
	up, err := v.UpdateWebhook(ctx, key, w.ID, req) // status "" is enabled
	if err != nil {
		t.Fatal(err)
	}
	rec := storedWebhook(t, v, tid, w.ID)
	if up.Status != WebhookEnabled || up.DisabledReason != "" || rec.DisabledReason != "" || !rec.FailingSince.IsZero() {
		t.Errorf("re-enabled: %+v, stored reason %q since %v", up, rec.DisabledReason, rec.FailingSince)
	}

	setState(WebhookDisabled, "gone")
	disabled := req
	disabled.Status = WebhookDisabled
	if _, err := v.UpdateWebhook(ctx, key, w.ID, disabled); err != nil {
		t.Fatal(err)
	}
	if rec := storedWebhook(t, v, tid, w.ID); rec.DisabledReason != "gone" {
		t.Errorf("an update that keeps it disabled lost why: %q", rec.DisabledReason)
	}
	setState(WebhookEnabled, "")
	if _, err := v.UpdateWebhook(ctx, key, w.ID, disabled); err != nil {
		t.Fatal(err)
	}
	if rec := storedWebhook(t, v, tid, w.ID); rec.Status != WebhookDisabled || rec.DisabledReason != "" {
		t.Errorf("disabled by a caller: status %q reason %q", rec.Status, rec.DisabledReason)
	}
}

// TestWebhookWritesForgetTargets: a transaction that creates a webhook
// and then emits sees it among the targets (forgetWebhooks drops the
// targets it read before).
func TestWebhookWritesForgetTargets(t *testing.T) {
	v, _, boot := webhookVault(t)
	ctx, tid := context.Background(), boot.Tenant.ID
	err := v.update(ctx, func(tx *txn) error {
		et, _ := events.Lookup(EventTokenCreated)
		before, err := v.events.Targets(tx.Tx, tid, et)
		if err != nil || len(before) != 0 {
			t.Fatalf("targets before: %v, %v", before, err)
		}
		rec := &events.Webhook{ID: v.ids.Next(tx.Now), TenantID: tid, Name: "h", URL: "https://hooks.example.com/in",
			Events: []string{"*"}, Status: WebhookEnabled, Secret: events.NewSecret(), CreatedAt: tx.Now}
		if err := tx.PutRecord(barrier.Tenant(tid).Record(EntityWebhook, rec.ID), rec); err != nil {
			return err
		}
		events.Forget(tx.Tx, tid)
		after, err := v.events.Targets(tx.Tx, tid, et)
		if err != nil || len(after) != 1 {
			t.Errorf("targets after the write: %v, %v", after, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWebhookTargetsAreTheTenants: a change of one tenant is queued for
// its own subscribed, enabled webhooks only: never another tenant's,
// whatever that one subscribes to, nor its own disabled or unsubscribed
// ones.
func TestWebhookTargetsAreTheTenants(t *testing.T) {
	v, _, a := webhookVault(t)
	ctx := context.Background()
	b, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	hook := func(boot *TenantBootstrap, name, status string, events ...string) string {
		t.Helper()
		w, err := v.CreateWebhook(ctx, boot.Application.Key, WebhookRequest{Name: name, URL: "https://hooks.example.com/" + name,
			Events: events, Status: status})
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	mine := hook(a, "mine", "", EventTokenCreated)
	hook(a, "off", WebhookDisabled, "*")
	hook(a, "other-type", "", EventTokenDeleted)
	hook(b, "theirs", "", "*", EventTokenCreated)

	var mu sync.Mutex
	got := map[string][]string{} // tenant: webhook ids
	v.events.Tap = func(tid string, ev events.Outgoing, targets []*events.Webhook) {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range targets {
			got[tid] = append(got[tid], w.TenantID+"/"+w.ID)
		}
	}
	app, err := v.CreateApplication(ctx, a.Application.Key, CreateApplicationRequest{Name: "p", Type: Private, Permissions: []string{PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeToken, Data: "x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string][]string{a.Tenant.ID: {a.Tenant.ID + "/" + mine}}
	if len(got) != 1 || len(got[a.Tenant.ID]) != 1 || got[a.Tenant.ID][0] != want[a.Tenant.ID][0] {
		t.Errorf("token.created of tenant A queued for %v, want %v", got, want)
	}
}
