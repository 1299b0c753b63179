package auditlog_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/syncbuf"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// deniedFixture is a tenant with a token in /general/ and an application
// whose rules grant token:read on /pci/ only: its reads of the token are
// refused.
type deniedFixture struct {
	e   *vaulttest.Env
	tok string
	pci *tokenvault.Application
}

func newDeniedFixture(t *testing.T, opts ...func(*tokenvault.Options)) *deniedFixture {
	t.Helper()
	e := vaulttest.NewEnvOn(t, memory.New(), opts...)
	writer := e.Revealer(t, tokenvault.PermTokenCreate)
	tok, err := e.V.CreateToken(ctx, writer.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/general/"}})
	if err != nil {
		t.Fatal(err)
	}
	pci, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "pci", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{tokenvault.PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &deniedFixture{e: e, tok: tok.ID, pci: pci}
}

// read reads the token with key from address addr, which is refused.
func (f *deniedFixture) read(t *testing.T, key tokenvault.Credential, addr string) {
	t.Helper()
	c := tokenvault.WithCallInfo(ctx, &tokenvault.CallInfo{ClientAddress: addr})
	_, err := f.e.V.GetToken(c, key, f.tok)
	vaulttest.WantKind(t, "GetToken", err, tokenvault.PermissionDenied)
}

// logs lists every line of key's tenant that req keeps, following the
// cursor to the end.
func logs(t *testing.T, e *vaulttest.Env, key tokenvault.Credential, req tokenvault.ListLogsRequest) []tokenvault.Log {
	t.Helper()
	req.Size = 100
	var out []tokenvault.Log
	for {
		p, err := e.V.ListLogs(ctx, key, req)
		if err != nil {
			t.Fatalf("ListLogs(%+v): %v", req, err)
		}
		out = append(out, p.Data...)
		if p.Pagination.After == "" {
			return out
		}
		req.Start = p.Pagination.After
	}
}

// TestDeniedCallIsLogged: a 403 writes one line to the key's tenant's
// log, operation and outcome denied, naming the permission, the
// container, the Vault method and the client address, with the
// application as actor; no line holds the key; the filters find it.
func TestDeniedCallIsLogged(t *testing.T) {
	t.Parallel()
	f := newDeniedFixture(t)
	f.read(t, f.pci.Key, "203.0.113.7")

	denied := logs(t, f.e, f.e.Mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	if len(denied) != 1 {
		t.Fatalf("ListLogs(outcome=denied) = %d lines, want 1: %+v", len(denied), denied)
	}
	l := denied[0]
	t.Logf("denied line: %s", l.Message)
	if l.Operation != tokenvault.OpDenied || l.Outcome != tokenvault.OutcomeDenied || l.ActorID != f.pci.ID ||
		l.ActorType != tokenvault.ActorApplication || l.EntityType != tokenvault.EntityApplication || l.EntityID != f.pci.ID {
		t.Errorf("denied line = %+v, want operation and outcome denied, actor and entity application %s", l, f.pci.ID)
	}
	for _, want := range []string{"Vault.GetToken", "403", "203.0.113.7", "token:read on /general/", "/pci/"} {
		if !strings.Contains(l.Message, want) {
			t.Errorf("denied line's message %q does not name %q", l.Message, want)
		}
	}
	all := logs(t, f.e, f.e.Mgmt, tokenvault.ListLogsRequest{})
	for _, l := range all {
		if strings.Contains(l.Message, string(f.pci.Key)) || strings.Contains(l.Message, string(f.e.Mgmt)) {
			t.Errorf("line %s holds a key: %q", l.ID, l.Message)
		}
		if want := tokenvault.OutcomeAllowed; l.Operation != tokenvault.OpDenied && l.Outcome != want {
			t.Errorf("line %s (operation %s) has outcome %q, want %q", l.ID, l.Operation, l.Outcome, want)
		}
	}
	// The line is in the tenant's chain like every line: signed, the
	// chain verifies whole.
	if _, err := f.e.V.SignAuditChain(ctx, f.e.Boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if rep, err := f.e.V.VerifyAuditChain(ctx, f.e.Boot.Tenant.ID); err != nil || !rep.OK || rep.Unlinked != 0 {
		t.Errorf("VerifyAuditChain after a denied line = %+v, %v; want OK, nothing unlinked", rep, err)
	}
	// The filters: by actor, by operation, by outcome, and together.
	for _, c := range []struct {
		req  tokenvault.ListLogsRequest
		want int
	}{
		{tokenvault.ListLogsRequest{ActorID: f.pci.ID}, 1},
		{tokenvault.ListLogsRequest{Operation: tokenvault.OpDenied}, 1},
		{tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeAllowed}, len(all) - 1},
		{tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeAllowed, ActorID: f.pci.ID}, 0},
		{tokenvault.ListLogsRequest{Operation: tokenvault.OpCreate, EntityType: tokenvault.EntityToken, EntityID: f.tok}, 1},
		{tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied, EntityType: tokenvault.EntityApplication, EntityID: f.pci.ID}, 1},
	} {
		if got := logs(t, f.e, f.e.Mgmt, c.req); len(got) != c.want {
			t.Errorf("ListLogs(%+v) = %d lines, want %d", c.req, len(got), c.want)
		}
	}
	for _, req := range []tokenvault.ListLogsRequest{{Outcome: "maybe"}, {Operation: "peek"}, {ActorID: "a/b"}} {
		_, err := f.e.V.ListLogs(ctx, f.e.Mgmt, req)
		vaulttest.WantKind(t, "ListLogs(bad filter)", err, tokenvault.Invalid)
	}
}

// TestDeniedFloodIsBounded: a flood of denials writes at most a key's
// bound (a quarter of the tenant's) for the key that floods, so that
// another key's refusal is still written; several keys flooding write at
// most the tenant's bound; a minute later a summary line for the key and
// one for the tenant say how many were not written; another tenant's log
// is untouched and its own denial has its own bucket.
func TestDeniedFloodIsBounded(t *testing.T) {
	t.Parallel()
	const bound, keyBound = 12, 3
	f := newDeniedFixture(t, func(o *tokenvault.Options) { o.Limits.DeniedLinesPerMinute = bound })
	other := f.e.Tenant(t, "Other")
	otherBefore := logs(t, f.e, other.Application.Key, tokenvault.ListLogsRequest{})
	denied := func() []tokenvault.Log {
		return logs(t, f.e, f.e.Mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	}

	const flood = 10000
	for range flood {
		f.read(t, f.pci.Key, "198.51.100.1")
	}
	if got := denied(); len(got) != keyBound {
		t.Fatalf("after %d denials of one key: %d denied lines, want the key's bound %d", flood, len(got), keyBound)
	}
	// Another key's refusal is written: the flood used up its own key's
	// bucket, not the tenant's.
	innocent := f.e.Reader(t, tokenvault.TransformMask, tokenvault.PermTokenRead)
	_, err := f.e.V.ListLogs(ctx, innocent.Key, tokenvault.ListLogsRequest{})
	vaulttest.WantKind(t, "ListLogs without log:read", err, tokenvault.PermissionDenied)
	if got := denied(); len(got) != keyBound+1 || got[0].ActorID != innocent.ID {
		t.Fatalf("after another key's refusal: %d denied lines, newest %+v; want it written", len(got), got[0])
	}
	// Five more keys flooding: the tenant's bound holds them all.
	for range 5 {
		k := f.e.Reader(t, tokenvault.TransformMask, tokenvault.PermTokenCreate)
		for range 100 {
			f.read(t, k.Key, "198.51.100.2")
		}
	}
	if got := denied(); len(got) != bound {
		t.Fatalf("after six keys' floods: %d denied lines, want the tenant's bound %d", len(got), bound)
	}
	if got := logs(t, f.e, other.Application.Key, tokenvault.ListLogsRequest{}); len(got) != len(otherBefore) {
		t.Errorf("the other tenant's log went from %d to %d lines during the flood", len(otherBefore), len(got))
	}

	f.e.Clock.Advance(time.Minute)
	f.read(t, f.pci.Key, "198.51.100.1")
	got := denied()
	if len(got) != bound+3 {
		t.Fatalf("a minute later: %d denied lines, want %d (the bound, the key's and the tenant's summaries, the new denial)", len(got), bound+3)
	}
	// Newest first: the new denial, then the summaries written before it.
	keySummary, tenantSummary := got[2], got[1]
	if want := fmt.Sprintf("%d denied calls of this key not logged", flood-keyBound); !strings.Contains(keySummary.Message, want) ||
		keySummary.ActorType != tokenvault.ActorSystem || keySummary.EntityID != f.pci.ID {
		t.Errorf("the key's summary line = %+v, want a system line on the key saying %q", keySummary, want)
	}
	// Six keys wanted 3+1+5*3 lines; the tenant's bound let 12 through.
	if want := fmt.Sprintf("%d denied calls not logged", keyBound+1+5*keyBound-bound); !strings.Contains(tenantSummary.Message, want) ||
		tenantSummary.ActorType != tokenvault.ActorSystem {
		t.Errorf("the tenant's summary line = %+v, want a system line saying %q", tenantSummary, want)
	}

	// The other tenant's denial has its own bucket.
	reader := otherReader(t, f.e, other)
	_, err = f.e.V.ListLogs(ctx, reader.Key, tokenvault.ListLogsRequest{})
	vaulttest.WantKind(t, "ListLogs without log:read", err, tokenvault.PermissionDenied)
	others := logs(t, f.e, other.Application.Key, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	if len(others) != 1 || !strings.Contains(others[0].Message, "Vault.ListLogs") || !strings.Contains(others[0].Message, "log:read") {
		t.Errorf("the other tenant's denied lines = %+v, want its one ListLogs refusal", others)
	}
}

// otherReader is an application of tenant boot holding token:create only.
func otherReader(t *testing.T, e *vaulttest.Env, boot *tokenvault.TenantBootstrap) *tokenvault.Application {
	t.Helper()
	a, err := e.V.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "creator", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestDeniedKeysOfKnownTenants: an expired application's key is a 401
// its tenant sees, with the state that refused it; a key no tenant holds
// writes no line anywhere and is counted in Stats.
func TestDeniedKeysOfKnownTenants(t *testing.T) {
	t.Parallel()
	var serverLog syncbuf.Buffer
	f := newDeniedFixture(t, func(o *tokenvault.Options) { o.Logger = slog.New(slog.NewTextHandler(&serverLog, nil)) })
	exp := f.e.Clock.Now().Add(time.Hour)
	app, err := f.e.V.CreateApplication(ctx, f.e.Mgmt, tokenvault.CreateApplicationRequest{Name: "temp", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	f.e.Clock.Advance(2 * time.Hour)
	_, err = f.e.V.GetToken(tokenvault.WithCallInfo(ctx, &tokenvault.CallInfo{ClientAddress: "192.0.2.9"}), app.Key, f.tok)
	vaulttest.WantKind(t, "GetToken(expired key)", err, tokenvault.Unauthenticated)
	unknown := tokenvault.Credential("key_live_" + strings.Repeat("z", 40))
	_, err = f.e.V.GetToken(ctx, unknown, f.tok)
	vaulttest.WantKind(t, "GetToken(unknown key)", err, tokenvault.Unauthenticated)

	denied := logs(t, f.e, f.e.Mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	if len(denied) != 1 {
		t.Fatalf("denied lines = %+v, want the expired key's one", denied)
	}
	if l := denied[0]; l.ActorID != app.ID || !strings.Contains(l.Message, "401") || !strings.Contains(l.Message, "expired") ||
		strings.Contains(l.Message, string(app.Key)) {
		t.Errorf("expired key's line = %+v, want actor %s, 401, expired, and no key", l, app.ID)
	}
	if got := f.e.V.Stats().Denials.UnknownKey; got != 1 {
		t.Errorf("Stats().Denials.UnknownKey = %d, want 1", got)
	}
	if out := serverLog.String(); !strings.Contains(out, "key no tenant holds") || !strings.Contains(out, "Vault.GetToken") ||
		strings.Contains(out, string(unknown)) || strings.Contains(out, string(app.Key)) {
		t.Errorf("server log = %q, want the unknown key's call named, and no key", out)
	}
}

// TestDeniedThrottleOfAKnownKey: once an address has used up its failed
// authentications, the 429 answered to an expired key of a known tenant
// is that tenant's line too, marked throttled.
func TestDeniedThrottleOfAKnownKey(t *testing.T) {
	t.Parallel()
	f := newDeniedFixture(t, func(o *tokenvault.Options) { o.Limits.AuthFailuresPerMinute = 1 })
	exp := f.e.Clock.Now().Add(time.Hour)
	app, err := f.e.V.CreateApplication(ctx, f.e.Mgmt, tokenvault.CreateApplicationRequest{Name: "temp", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	f.e.Clock.Advance(2 * time.Hour)
	for i, want := range []tokenvault.Kind{tokenvault.Unauthenticated, tokenvault.RateLimited} {
		_, err := f.e.V.GetToken(tokenvault.WithCallInfo(ctx, &tokenvault.CallInfo{ClientAddress: "192.0.2.10"}), app.Key, f.tok)
		vaulttest.WantKind(t, fmt.Sprint("GetToken(expired key) #", i+1), err, want)
	}
	denied := logs(t, f.e, f.e.Mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	if len(denied) != 2 || !strings.Contains(denied[0].Message, "429") || !strings.Contains(denied[0].Message, "throttled") ||
		!strings.Contains(denied[1].Message, "401") {
		t.Errorf("denied lines = %+v, want the 401 then the throttled 429", denied)
	}
}
