package vaulttest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// mustSucceed marks a cell that is not a refusal.
const mustSucceed = tokenvault.Kind(255)

// tenantB is a second tenant with one resource of every kind.
type tenantB struct {
	mgmt       tokenvault.Credential
	app        *tokenvault.Application
	token      *tokenvault.Token
	member     *tokenvault.TenantMember
	invitation *tokenvault.Invitation
	formula    *tokenvault.Formula
	reactor    *tokenvault.Reactor
	proxy      *tokenvault.Proxy
	nonce      string
}

// secretsOfB are strings of tenant B that must never appear in anything
// tenant A sees.
var secretsOfB = []string{"Beta Corp", "beta-private", "beta-secret-value", "beta@example.com", "beta-formula", "beta-reactor", "beta-proxy"}

func newTenantB(t *testing.T, e *vaulttest.Env, m *testfake.Mailer) *tenantB {
	t.Helper()
	boot, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Beta Corp"})
	if err != nil {
		t.Fatal(err)
	}
	b := &tenantB{mgmt: boot.Application.Key}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	b.app, err = e.V.CreateApplication(ctx, b.mgmt, tokenvault.CreateApplicationRequest{Name: "beta-private", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read", "token:use"}}}})
	must(err)
	b.token, err = e.V.CreateToken(ctx, b.app.Key, tokenvault.TokenRequest{Type: "token", Data: "beta-secret-value"})
	must(err)
	b.invitation, err = e.V.CreateInvitation(ctx, b.mgmt, tokenvault.CreateInvitationRequest{Email: "beta@example.com"})
	must(err)
	_, err = e.V.CreateInvitation(ctx, b.mgmt, tokenvault.CreateInvitationRequest{Email: "beta2@example.com"})
	must(err)
	b.member, err = e.V.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{})
	must(err)
	b.formula, err = e.V.CreateFormula(ctx, b.mgmt, tokenvault.FormulaRequest{Name: "beta-formula", Code: vaulttest.EchoCode})
	must(err)
	b.reactor, err = e.V.CreateReactor(ctx, b.mgmt, tokenvault.CreateReactorRequest{Name: "beta-reactor", Formula: &tokenvault.Ref{ID: b.formula.ID}, Configuration: map[string]any{}})
	must(err)
	b.proxy, err = e.V.CreateProxy(ctx, b.mgmt, tokenvault.ProxyRequest{Name: "beta-proxy", DestinationURL: "https://example.com"})
	must(err)
	pub, err := e.V.CreateApplication(ctx, b.mgmt, tokenvault.CreateApplicationRequest{Name: "beta-public", Type: tokenvault.Public, Permissions: []string{"token:create"}})
	must(err)
	s, err := e.V.CreateSession(ctx, pub.Key)
	must(err)
	b.nonce = s.Nonce
	return b
}

// TestTenantIsolation calls every operation that takes an id with tenant
// A's keys (holding every permission) and tenant B's ids: each is refused as
// if the resource did not exist, the store is unchanged, and no error
// mentions anything of B.
func TestTenantIsolation(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	b := newTenantB(t, e, m)
	a := e.Mgmt
	user := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete", "token:search", "token:use").Key
	cells := []struct {
		name string
		kind tokenvault.Kind
		call func() error
	}{
		{"GetApplication", tokenvault.NotFound, func() error { _, err := e.V.GetApplication(ctx, a, b.app.ID); return err }},
		{"UpdateApplication", tokenvault.NotFound, func() error {
			_, err := e.V.UpdateApplication(ctx, a, b.app.ID, tokenvault.UpdateApplicationRequest{Name: "x", Permissions: []string{"token:read"}})
			return err
		}},
		{"RegenerateApplicationKey", tokenvault.NotFound, func() error { _, err := e.V.RegenerateApplicationKey(ctx, a, b.app.ID); return err }},
		{"DeleteApplication", tokenvault.NotFound, func() error { return e.V.DeleteApplication(ctx, a, b.app.ID) }},
		{"GetToken", tokenvault.NotFound, func() error { _, err := e.V.GetToken(ctx, user, b.token.ID); return err }},
		{"UpdateToken", tokenvault.NotFound, func() error {
			_, err := e.V.UpdateToken(ctx, user, b.token.ID, json.RawMessage(`{"metadata": {"k": "v"}}`))
			return err
		}},
		{"DeleteToken", tokenvault.NotFound, func() error { return e.V.DeleteToken(ctx, user, b.token.ID) }},
		{"Detokenize", tokenvault.Invalid, func() error {
			_, err := e.V.Detokenize(ctx, user, map[string]any{"v": "{{" + b.token.ID + "}}"})
			return err
		}},
		{"CreateToken with B's id", tokenvault.Conflict, nil}, // placeholder replaced below
		{"DeleteMember", tokenvault.NotFound, func() error { return e.V.DeleteMember(ctx, a, b.member.ID) }},
		{"GetInvitation", tokenvault.NotFound, func() error { _, err := e.V.GetInvitation(ctx, a, b.invitation.ID); return err }},
		{"ResendInvitation", tokenvault.NotFound, func() error { _, err := e.V.ResendInvitation(ctx, a, b.invitation.ID); return err }},
		{"DeleteInvitation", tokenvault.NotFound, func() error { return e.V.DeleteInvitation(ctx, a, b.invitation.ID) }},
		{"GetFormula", tokenvault.NotFound, func() error { _, err := e.V.GetFormula(ctx, a, b.formula.ID); return err }},
		{"UpdateFormula", tokenvault.NotFound, func() error {
			_, err := e.V.UpdateFormula(ctx, a, b.formula.ID, tokenvault.FormulaRequest{Name: "x", Code: vaulttest.EchoCode})
			return err
		}},
		{"DeleteFormula", tokenvault.NotFound, func() error { return e.V.DeleteFormula(ctx, a, b.formula.ID) }},
		{"CreateReactor with B's formula", tokenvault.Invalid, func() error {
			_, err := e.V.CreateReactor(ctx, a, tokenvault.CreateReactorRequest{Name: "x", Formula: &tokenvault.Ref{ID: b.formula.ID}, Configuration: map[string]any{}})
			return err
		}},
		{"CreateReactor with B's application", tokenvault.Invalid, func() error {
			_, err := e.V.CreateReactor(ctx, a, tokenvault.CreateReactorRequest{Name: "x", Code: vaulttest.EchoCode, Application: &tokenvault.Ref{ID: b.app.ID}})
			return err
		}},
		{"GetReactor", tokenvault.NotFound, func() error { _, err := e.V.GetReactor(ctx, a, b.reactor.ID); return err }},
		{"UpdateReactor", tokenvault.NotFound, func() error {
			_, err := e.V.UpdateReactor(ctx, a, b.reactor.ID, tokenvault.UpdateReactorRequest{Name: "x", Configuration: map[string]any{}})
			return err
		}},
		{"PatchReactor", tokenvault.NotFound, func() error { return e.V.PatchReactor(ctx, a, b.reactor.ID, json.RawMessage(`{"name": "x"}`)) }},
		{"DeleteReactor", tokenvault.NotFound, func() error { return e.V.DeleteReactor(ctx, a, b.reactor.ID) }},
		{"InvokeReactor", tokenvault.NotFound, func() error {
			_, err := e.V.InvokeReactor(ctx, user, b.reactor.ID, tokenvault.InvokeReactorRequest{})
			return err
		}},
		{"InvokeReactor with B's token in args", tokenvault.Invalid, nil}, // needs a reactor of A, set below
		{"GetProxy", tokenvault.NotFound, func() error { _, err := e.V.GetProxy(ctx, a, b.proxy.ID); return err }},
		{"UpdateProxy", tokenvault.NotFound, func() error {
			_, err := e.V.UpdateProxy(ctx, a, b.proxy.ID, tokenvault.ProxyRequest{Name: "x", DestinationURL: "https://example.com"})
			return err
		}},
		{"PatchProxy", tokenvault.NotFound, func() error { return e.V.PatchProxy(ctx, a, b.proxy.ID, json.RawMessage(`{"name": "x"}`)) }},
		{"DeleteProxy", tokenvault.NotFound, func() error { return e.V.DeleteProxy(ctx, a, b.proxy.ID) }},
		{"CreateProxy with B's application", tokenvault.Invalid, func() error {
			_, err := e.V.CreateProxy(ctx, a, tokenvault.ProxyRequest{Name: "x", DestinationURL: "https://example.com", Application: &tokenvault.Ref{ID: b.app.ID}})
			return err
		}},
		{"InvokeProxy with B's proxy and A's key", tokenvault.Unauthenticated, func() error {
			_, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(b.proxy.Key, user, "", `{}`))
			return err
		}},
		{"AuthorizeSession with B's nonce", tokenvault.Invalid, func() error {
			return e.V.AuthorizeSession(ctx, user, tokenvault.AuthorizeSessionRequest{Nonce: b.nonce, Permissions: []string{"token:read"}})
		}},
	}
	ownReactor := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode})
	for i := range cells {
		switch cells[i].name {
		case "CreateToken with B's id":
			// A custom id taken in B is free in A: tokens are per tenant.
			cells[i].kind = mustSucceed
			cells[i].call = func() error {
				tok, err := e.V.CreateToken(ctx, user, tokenvault.TokenRequest{ID: "shared-custom-id", Type: "token", Data: "a"})
				if err == nil && tok.TenantID != e.Boot.Tenant.ID {
					t.Errorf("token created in tenant %s", tok.TenantID)
				}
				return err
			}
			if _, err := e.V.CreateToken(ctx, b.app.Key, tokenvault.TokenRequest{ID: "shared-custom-id", Type: "token", Data: "b"}); err != nil {
				t.Fatal(err)
			}
		case "InvokeReactor with B's token in args":
			cells[i].call = func() error {
				_, err := e.V.InvokeReactor(ctx, user, ownReactor.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"x": "{{" + b.token.ID + "}}"}})
				return err
			}
		}
	}

	tenantBKeys := func() map[string][]byte {
		out := map[string][]byte{}
		for k, v := range vaulttest.Dump(t, e.Store) {
			if strings.Contains(k, b.app.TenantID) || strings.HasPrefix(k, "sys/") {
				out[k] = v
			}
		}
		return out
	}
	e.SettleChain(t) // B's lines linked: the linker rewrites nothing of B's below
	before := tenantBKeys()
	refused := 0
	for _, c := range cells {
		err := c.call()
		if c.kind == mustSucceed {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if tokenvault.ErrorKind(err) != c.kind || err == nil {
			t.Errorf("%s with tenant A's key = %v, want kind %v", c.name, err, c.kind)
			continue
		}
		refused++
		for _, s := range append(secretsOfB, b.app.TenantID) {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q reveals %q", c.name, err, s)
			}
		}
	}
	after := tenantBKeys()
	for k := range after {
		// A's own lines queue for the linker, and mark A's unsigned chain.
		ofA := (strings.HasPrefix(k, "sys/chainq/") || strings.HasPrefix(k, "sys/chain-unsigned/")) && !strings.Contains(k, b.app.TenantID)
		if _, ok := before[k]; !ok && !strings.HasPrefix(k, "sys/apikey/") && !strings.HasPrefix(k, "sys/expiry/") && !ofA {
			t.Errorf("new entry %s", k)
		}
	}
	for k, v := range before {
		if strings.HasPrefix(k, "sys/") {
			continue // A's own writes (its new keys, tokens' schedules) live here too
		}
		if string(after[k]) != string(v) {
			t.Errorf("tenant B's entry %s changed", k)
		}
	}
	t.Logf("%d cross-tenant calls refused", refused)

	// Lists and logs of A never show B's resources.
	lists := map[string]func() (any, error){
		"ListApplications": func() (any, error) {
			return e.V.ListApplications(ctx, a, tokenvault.ListApplicationsRequest{IDs: []string{b.app.ID}})
		},
		"ListTokens": func() (any, error) {
			return e.V.ListTokens(ctx, user, tokenvault.ListTokensRequest{IDs: []string{b.token.ID}})
		},
		"ListMembers": func() (any, error) {
			return e.V.ListMembers(ctx, a, tokenvault.ListMembersRequest{UserIDs: []string{b.member.User.ID}})
		},
		"ListInvitations": func() (any, error) { return e.V.ListInvitations(ctx, a, tokenvault.ListInvitationsRequest{}) },
		"ListReactors":    func() (any, error) { return e.V.ListReactors(ctx, a, tokenvault.ListReactorsRequest{}) },
		"ListProxies":     func() (any, error) { return e.V.ListProxies(ctx, a, tokenvault.ListProxiesRequest{}) },
		"ListFormulas":    func() (any, error) { return e.V.ListFormulas(ctx, a, tokenvault.ListFormulasRequest{}) },
		"ListLogs":        func() (any, error) { return e.V.ListLogs(ctx, a, tokenvault.ListLogsRequest{}) },
	}
	for name, list := range lists {
		out, err := list()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		js, _ := json.Marshal(out)
		for _, s := range append(secretsOfB, b.app.ID, b.token.ID, b.reactor.ID, b.proxy.ID, b.formula.ID, b.invitation.ID) {
			if strings.Contains(string(js), s) {
				t.Errorf("%s of tenant A shows %q of tenant B", name, s)
			}
		}
	}
}
