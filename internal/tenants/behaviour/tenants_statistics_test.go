package tenants_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTenantStatistics: a management key (tenant:read) reads its tenant's
// figures (tokens by type and container, applications, members, webhooks
// and the last signed checkpoint) without reading a token; a key without
// tenant:read is refused; another tenant's figures are its own.
func TestTenantStatistics(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "a", Containers: []string{"/pci/", "/eu/"}})
		e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "b", Containers: []string{"/pci/"}})
		e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
		rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
		for _, status := range []string{"enabled", "disabled"} {
			if _, err := e.V.CreateWebhook(ctx, e.Mgmt, tokenvault.WebhookRequest{Name: status, URL: rcv.URL + "/hook",
				Events: []string{tokenvault.EventTokenCreated}, Status: status}); err != nil {
				t.Fatalf("CreateWebhook(%s): %v", status, err)
			}
		}
		s, err := e.V.TenantStatistics(ctx, e.Mgmt)
		if err != nil {
			t.Fatalf("TenantStatistics(management key): %v", err)
		}
		if s.Tokens.Total != 3 || s.Tokens.ByType["token"] != 2 || s.Tokens.ByType["card"] != 1 || s.Tokens.ByType["bank"] != 0 {
			t.Errorf("TenantStatistics tokens = %+v, want 3: 2 token, 1 card, 0 bank", s.Tokens)
		}
		if s.Tokens.ByContainer["/pci/"] != 2 || s.Tokens.ByContainer["/eu/"] != 1 || s.Tokens.Unplaced != 0 {
			t.Errorf("TenantStatistics by container = %v (unplaced %d), want /pci/ 2, /eu/ 1", s.Tokens.ByContainer, s.Tokens.Unplaced)
		}
		// The bootstrap management application and the three Token made
		// (one per call), the owner.
		if s.Applications != 4 || s.Members != 1 || s.Reactors != 0 || s.Proxies != 0 {
			t.Errorf("TenantStatistics = %d applications, %d members, %d reactors, %d proxies; want 4, 1, 0, 0",
				s.Applications, s.Members, s.Reactors, s.Proxies)
		}
		if s.Webhooks != (tokenvault.WebhookStatistics{Total: 2, Disabled: 1}) {
			t.Errorf("TenantStatistics webhooks = %+v, want 2, 1 disabled", s.Webhooks)
		}

		e.SettleChain(t)
		cp, err := e.V.SignAuditChain(ctx, e.Boot.Tenant.ID)
		if err != nil {
			t.Fatalf("SignAuditChain: %v", err)
		}
		s, err = e.V.TenantStatistics(ctx, e.Mgmt)
		if err != nil {
			t.Fatalf("TenantStatistics after signing: %v", err)
		}
		if s.AuditCheckpoint == nil || s.AuditCheckpoint.Seq != cp.Seq || !s.AuditCheckpoint.CreatedAt.Equal(cp.CreatedAt) || s.AuditCheckpoint.KeyID != cp.KeyID {
			t.Errorf("TenantStatistics checkpoint = %+v, want seq %d at %v", s.AuditCheckpoint, cp.Seq, cp.CreatedAt)
		}

		reader := e.Reader(t, "mask", "token:read")
		_, err = e.V.TenantStatistics(ctx, reader.Key)
		vaulttest.WantKind(t, "TenantStatistics(token:read key)", err, tokenvault.PermissionDenied)

		other := e.Tenant(t, "Other")
		s, err = e.V.TenantStatistics(ctx, other.Application.Key)
		if err != nil {
			t.Fatalf("TenantStatistics(other tenant): %v", err)
		}
		if s.Tokens.Total != 0 || s.Applications != 1 || s.Webhooks.Total != 0 || s.AuditCheckpoint != nil {
			t.Errorf("TenantStatistics(other tenant) = %+v, want its own empty figures", s)
		}
	})
}

// TestTenantStatisticsFailingWebhooks: a webhook whose receiver answers
// 500 counts as failing once a delivery to it has failed, and no longer
// once the receiver answers again.
func TestTenantStatisticsFailingWebhooks(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	e := vaulttest.DeliveryEnv(t)
	rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	if _, err := e.V.CreateWebhook(ctx, e.Mgmt, tokenvault.WebhookRequest{Name: "flaky", URL: rcv.URL + "/hook",
		Events: []string{tokenvault.EventTokenCreated}}); err != nil {
		t.Fatal(err)
	}
	failing := func() int {
		s, err := e.V.TenantStatistics(ctx, e.Mgmt)
		if err != nil {
			t.Fatalf("TenantStatistics: %v", err)
		}
		return s.Webhooks.Failing
	}
	if n := failing(); n != 0 {
		t.Fatalf("failing webhooks before any delivery = %d", n)
	}
	e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "a"})
	vaulttest.WaitUntil(t, "the webhook counted as failing", func() bool { return failing() == 1 })
	fail.Store(false)
	vaulttest.WaitUntil(t, "the webhook no longer failing", func() bool { return failing() == 0 })
}
