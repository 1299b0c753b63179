// Package approvals_test holds the behaviour tests of approvals for
// dangerous operations, through a Vault's public methods
// (internal/vaulttest).
package approvals_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

var ctx = context.Background()

// approvalEnv is a tenant whose policy needs 2 of 3 approvers for every
// operation it can name; req is a manager that requests changes.
type approvalEnv struct {
	*vaulttest.Env
	approvers [3]*tokenvault.Application
	req       tokenvault.Credential
}

func newApprovalEnv(t *testing.T, e *vaulttest.Env) *approvalEnv {
	t.Helper()
	a := &approvalEnv{Env: e, req: e.Mgmt}
	var ids []string
	for i := range a.approvers {
		a.approvers[i] = e.App(t, tokenvault.Management, tokenvault.PermTenantRead, tokenvault.PermApplicationRead)
		ids = append(ids, a.approvers[i].ID)
	}
	_, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 2, Approvers: ids,
		Operations: []string{tokenvault.ApprovalCreateManagement, tokenvault.ApprovalWidenGrants, tokenvault.ApprovalRegenerateKey},
		TTLSeconds: 3600})
	if err != nil {
		t.Fatalf("SetApprovalPolicy: %v", err)
	}
	return a
}

// pending fails the test unless err is an *ApprovalRequired, and returns it.
func pending(t *testing.T, what string, err error) *tokenvault.ApprovalRequired {
	t.Helper()
	var ar *tokenvault.ApprovalRequired
	if !errors.As(err, &ar) {
		t.Fatalf("%s = %v, want *ApprovalRequired", what, err)
	}
	if ar.Change.Status != tokenvault.ChangePending || ar.Change.ID == "" {
		t.Fatalf("%s: change %+v, want a pending change with an id", what, ar.Change)
	}
	return ar
}

// TestApprovalCreateManagement: creating a management application waits
// for approval; the first approval does not create it (m-1), the second
// does (m), and the key given to the requester with the 202 then works.
// The requester cannot approve its own change, and one approver counts
// once.
func TestApprovalCreateManagement(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		a := newApprovalEnv(t, e)
		_, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "ops", Type: tokenvault.Management,
			Permissions: []string{tokenvault.PermApplicationRead}})
		ar := pending(t, "CreateApplication(management)", err)
		if ar.Key == "" || strings.Contains(string(ar.Change.After), string(ar.Key)) || ar.Change.Before != nil && string(ar.Change.Before) != "null" {
			t.Errorf("change %+v, key %q: want the key to its requester only, before null", ar.Change, ar.Key)
		}
		if !strings.Contains(string(ar.Change.After), `"name":"ops"`) {
			t.Errorf("after = %s, want the application to be created", ar.Change.After)
		}
		if _, err := e.V.GetApplicationByKey(ctx, ar.Key); err == nil {
			t.Fatal("the key works before the change is approved")
		}
		// The requester cannot approve its own change, even when it is an
		// approver.
		if _, err := e.V.ApproveChange(ctx, a.req, ar.Change.ID); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Errorf("ApproveChange by its requester = %v, want PermissionDenied", err)
		}
		got, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID)
		if err != nil || got.Status != tokenvault.ChangePending || len(got.Approvals) != 1 {
			t.Fatalf("first ApproveChange = %+v, %v; want pending with one approval", got, err)
		}
		if _, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("second ApproveChange by the same approver = %v, want Conflict", err)
		}
		if _, err := e.V.GetApplicationByKey(ctx, ar.Key); err == nil {
			t.Fatal("the key works after m-1 approvals")
		}
		got, err = e.V.ApproveChange(ctx, a.approvers[1].Key, ar.Change.ID)
		if err != nil || got.Status != tokenvault.ChangeApplied {
			t.Fatalf("m-th ApproveChange = %+v, %v; want applied", got, err)
		}
		app, err := e.V.GetApplicationByKey(ctx, ar.Key)
		if err != nil || app.ID != ar.Change.Target || app.Type != tokenvault.Management {
			t.Fatalf("GetApplicationByKey after approval = %+v, %v; want the new management application", app, err)
		}
		if _, err := e.V.ApproveChange(ctx, a.approvers[2].Key, ar.Change.ID); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("ApproveChange of an applied change = %v, want Conflict", err)
		}
		// Private applications are not held to approval.
		if _, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "p", Type: tokenvault.Private,
			Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Errorf("CreateApplication(private) = %v", err)
		}
		// The whole story is in the audit log.
		e.SettleChain(t)
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityApproval, EntityID: ar.Change.ID})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, l := range logs.Data {
			msgs = append(msgs, l.Message)
		}
		for _, want := range []string{"requested", "approved (1 of 2)", "approved (2 of 2)", "applied"} {
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasSuffix(m, want) }) {
				t.Errorf("audit lines %q: none ends %q", msgs, want)
			}
		}
	})
}

// TestApprovalNotApprover: a key that is not a named approver cannot
// approve, and a change is listed and shown to approvers.
func TestApprovalNotApprover(t *testing.T) {
	e := vaulttest.NewEnv(t)
	other := e.MgmtWith(t, tokenvault.PermTenantRead)
	a := newApprovalEnv(t, e)
	_, err := e.V.RegenerateApplicationKey(ctx, a.req, a.approvers[2].ID)
	ar := pending(t, "RegenerateApplicationKey", err)
	if _, err := e.V.ApproveChange(ctx, other, ar.Change.ID); !errors.Is(err, tokenvault.ErrPermissionDenied) {
		t.Errorf("ApproveChange by a non-approver = %v, want PermissionDenied", err)
	}
	list, err := e.V.ListApprovals(ctx, a.approvers[0].Key, tokenvault.ListApprovalsRequest{Status: tokenvault.ChangePending})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != ar.Change.ID || list.Data[0].Operation != tokenvault.ApprovalRegenerateKey {
		t.Fatalf("ListApprovals = %+v, %v; want the pending regeneration", list, err)
	}
	if _, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.ApproveChange(ctx, a.approvers[1].Key, ar.Change.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.GetApplicationByKey(ctx, a.approvers[2].Key)
	vaulttest.WantKind(t, "the old key after its regeneration", err, tokenvault.Unauthenticated)
	if app, err := e.V.GetApplicationByKey(ctx, ar.Key); err != nil || app.ID != a.approvers[2].ID {
		t.Errorf("the new key: %+v, %v", app, err)
	}
}

// TestApprovalExpired: a change past its expiry cannot be approved, and
// is recorded as expired.
func TestApprovalExpired(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	_, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "late", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	ar := pending(t, "CreateApplication", err)
	if _, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	got, err := e.V.ApproveChange(ctx, a.approvers[1].Key, ar.Change.ID)
	if !errors.Is(err, tokenvault.ErrConflict) || got == nil || got.Status != tokenvault.ChangeExpired {
		t.Fatalf("ApproveChange after expiry = %+v, %v; want expired, Conflict", got, err)
	}
	if _, err := e.V.GetApplicationByKey(ctx, ar.Key); err == nil {
		t.Error("an expired change was applied")
	}
	if c, err := e.V.GetApproval(ctx, e.Mgmt, ar.Change.ID); err != nil || c.Status != tokenvault.ChangeExpired {
		t.Errorf("GetApproval = %+v, %v; want expired", c, err)
	}
}

// TestApprovalRecheckedAtApply: a widening update is applied only to the
// application as it was requested: changed meanwhile, the change fails,
// saying why, and nothing of it lands. Narrowing needs no approval.
func TestApprovalRecheckedAtApply(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	priv := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	_, err := e.V.UpdateApplication(ctx, a.req, priv.ID, tokenvault.UpdateApplicationRequest{Name: priv.Name,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	ar := pending(t, "UpdateApplication(widen)", err)
	if !strings.Contains(string(ar.Change.Before), `"permissions":["token:create"]`) || !strings.Contains(string(ar.Change.After), `"token:read"`) {
		t.Errorf("diff %s -> %s, want token:read added", ar.Change.Before, ar.Change.After)
	}
	// A rename (nothing widened) is not held, and changes the application.
	if _, err := e.V.UpdateApplication(ctx, a.req, priv.ID, tokenvault.UpdateApplicationRequest{Name: "renamed",
		Permissions: []string{tokenvault.PermTokenCreate}}); err != nil {
		t.Fatalf("UpdateApplication(rename) = %v", err)
	}
	if _, err := e.V.ApproveChange(ctx, a.approvers[0].Key, ar.Change.ID); err != nil {
		t.Fatal(err)
	}
	got, err := e.V.ApproveChange(ctx, a.approvers[1].Key, ar.Change.ID)
	if !errors.Is(err, tokenvault.ErrConflict) || got == nil || got.Status != tokenvault.ChangeFailed ||
		!strings.Contains(got.Reason, "changed since the request") {
		t.Fatalf("ApproveChange of a stale change = %+v, %v; want failed, Conflict, saying why", got, err)
	}
	app, err := e.V.GetApplication(ctx, e.Mgmt, priv.ID)
	if err != nil || slices.Contains(app.Permissions, tokenvault.PermTokenRead) {
		t.Errorf("after a failed change: %+v, %v; want no token:read", app, err)
	}
}

// TestApprovalPolicyChangeNeedsApproval: once a policy exists, removing
// it needs its approval; applied, operations take effect at once again.
// A requester may withdraw its own change.
func TestApprovalPolicyChangeNeedsApproval(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	_, err := e.V.SetApprovalPolicy(ctx, a.req, tokenvault.ApprovalPolicy{})
	ar := pending(t, "SetApprovalPolicy(remove)", err)
	if c, err := e.V.RejectChange(ctx, a.req, ar.Change.ID, "changed my mind"); err != nil || c.Status != tokenvault.ChangeRejected {
		t.Fatalf("RejectChange by its requester = %+v, %v", c, err)
	}
	_, err = e.V.SetApprovalPolicy(ctx, a.req, tokenvault.ApprovalPolicy{})
	ar = pending(t, "SetApprovalPolicy(remove) again", err)
	for _, ap := range a.approvers[:2] {
		if _, err := e.V.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := e.V.GetApprovalPolicy(ctx, e.Mgmt)
	if err != nil || pol.Required != 0 {
		t.Fatalf("GetApprovalPolicy = %+v, %v; want none", pol, err)
	}
	if _, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "now", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}}); err != nil {
		t.Errorf("CreateApplication without a policy = %v", err)
	}
}

// TestApprovalPolicyInvalid: the policy's bad fields are refused.
func TestApprovalPolicyInvalid(t *testing.T) {
	e := vaulttest.NewEnv(t)
	priv := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	for _, p := range []tokenvault.ApprovalPolicy{
		{Required: 1},
		{Required: 2, Approvers: []string{"x"}},
		{Required: 1, Approvers: []string{priv.ID}},
		{Required: 1, Approvers: []string{priv.ID}, Operations: []string{"token.delete"}},
	} {
		_, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, p)
		vaulttest.WantKind(t, "SetApprovalPolicy", err, tokenvault.Invalid)
	}
}

// TestApprovalEvents: a change's life is told as events, each showing
// the change as it was then and never the key it holds.
func TestApprovalEvents(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tap := vaulttest.TapEvents(e.V)
	if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{"*"}, true); err != nil {
		t.Fatal(err)
	}
	a := newApprovalEnv(t, e)
	_, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "ev", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	ar := pending(t, "CreateApplication", err)
	for _, ap := range a.approvers[:2] {
		if _, err := e.V.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, ev := range tap.Events() {
		if strings.Contains(string(ev.JSON), string(ar.Key)) {
			t.Errorf("event %s shows the key", ev.Info.Type)
		}
		if strings.HasPrefix(ev.Info.Type, "approval.") {
			got = append(got, ev.Info.Type)
		}
	}
	want := []string{tokenvault.EventApprovalRequested, tokenvault.EventApprovalApproved, tokenvault.EventApprovalApproved, tokenvault.EventApprovalApplied}
	if !slices.Equal(got, want) {
		t.Errorf("approval events %q, want %q", got, want)
	}
}

// TestApprovalBulkDetokenize: with detokenize_over 2, a detokenization
// of 2 tokens goes ahead and one of 3 waits (202, nothing read); once
// approved, its requester makes exactly that call once with the
// approval's id: another body, another key or a second use is refused.
func TestApprovalBulkDetokenize(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		reader := e.Revealer(t, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		other := e.Revealer(t, tokenvault.PermTokenRead)
		var ids []string
		for _, n := range []string{"4242424242424242", "5555555555554444", "378282246310005"} {
			tok, err := e.V.CreateToken(ctx, reader.Key, vaulttest.CardRequest(n))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tok.ID)
		}
		a := newApprovalEnv(t, e)
		if _, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{}); err == nil {
			t.Fatal("changing the policy went ahead without approval")
		}
		// Replace the policy (with approval) by one that holds bulk reads.
		_, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 2,
			Approvers:  []string{a.approvers[0].ID, a.approvers[1].ID, a.approvers[2].ID},
			Operations: []string{tokenvault.ApprovalDetokenizeBulk}, DetokenizeOver: 2, TTLSeconds: 3600})
		ar := pending(t, "SetApprovalPolicy", err)
		for _, ap := range a.approvers[:2] {
			if _, err := e.V.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
				t.Fatal(err)
			}
		}
		two := map[string]any{"a": "{{ " + ids[0] + " }}", "b": "{{ " + ids[1] + " }}"}
		if _, err := e.V.Detokenize(ctx, reader.Key, two); err != nil {
			t.Fatalf("Detokenize of 2 tokens = %v, want it to go ahead", err)
		}
		three := map[string]any{"a": "{{ " + ids[0] + " }}", "b": "{{ " + ids[1] + " }}", "c": []any{"{{ " + ids[2] + " }}", "{{ " + ids[0] + " }}"}}
		out, err := e.V.Detokenize(ctx, reader.Key, three)
		ar = pending(t, "Detokenize of 3 tokens", err)
		if out != nil || !strings.Contains(string(ar.Change.After), `"tokens":3`) || strings.Contains(string(ar.Change.After), "4242") {
			t.Fatalf("held detokenization: %v, after %s; want nothing read, 3 tokens named, no data", out, ar.Change.After)
		}
		if _, err := e.V.DetokenizeApproved(ctx, reader.Key, ar.Change.ID, three); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("DetokenizeApproved before approval = %v, want Conflict", err)
		}
		for _, ap := range a.approvers[:2] {
			if _, err := e.V.ApproveChange(ctx, ap.Key, ar.Change.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.V.DetokenizeApproved(ctx, other.Key, ar.Change.ID, three); !errors.Is(err, tokenvault.ErrPermissionDenied) {
			t.Errorf("DetokenizeApproved by another key = %v, want PermissionDenied", err)
		}
		four := map[string]any{"a": "{{ " + ids[2] + " }}", "b": "{{ " + ids[1] + " }}", "c": "{{ " + ids[0] + " }}"}
		if _, err := e.V.DetokenizeApproved(ctx, reader.Key, ar.Change.ID, four); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("DetokenizeApproved of another body = %v, want Conflict", err)
		}
		got, err := e.V.DetokenizeApproved(ctx, reader.Key, ar.Change.ID, three)
		if err != nil || !strings.Contains(fmt.Sprint(got), "4242424242424242") {
			t.Fatalf("DetokenizeApproved = %v, %v; want the data", got, err)
		}
		if _, err := e.V.DetokenizeApproved(ctx, reader.Key, ar.Change.ID, three); !errors.Is(err, tokenvault.ErrConflict) {
			t.Errorf("DetokenizeApproved a second time = %v, want Conflict", err)
		}
		if c, err := e.V.GetApproval(ctx, e.Mgmt, ar.Change.ID); err != nil || c.UsedAt == nil {
			t.Errorf("GetApproval after use = %+v, %v; want used_at", c, err)
		}
	})
}

// TestApprovalApproverKept: an approver the policy needs cannot be
// deleted (nobody could approve any more, the policy's change included);
// one it can spare can.
func TestApprovalApproverKept(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	if err := e.V.DeleteApplication(ctx, e.Mgmt, a.approvers[0].ID); err != nil {
		t.Fatalf("DeleteApplication of a spare approver (3 left 2, 2 needed) = %v", err)
	}
	err := e.V.DeleteApplication(ctx, e.Mgmt, a.approvers[1].ID)
	vaulttest.WantKind(t, "DeleteApplication of a needed approver", err, tokenvault.Conflict)
}

// TestApprovalExpiredBySweep: a change nobody decides is recorded as
// expired by the sweeper at its expiry (audit line, status), and not
// before.
func TestApprovalExpiredBySweep(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	_, err := e.V.RegenerateApplicationKey(ctx, a.req, a.approvers[0].ID)
	ar := pending(t, "RegenerateApplicationKey", err)
	e.Clock.Advance(59 * time.Minute)
	if _, err := e.V.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := e.V.GetApproval(ctx, e.Mgmt, ar.Change.ID); err != nil || c.Status != tokenvault.ChangePending || c.DecidedAt != nil {
		t.Fatalf("before its expiry: %+v, %v; want pending", c, err)
	}
	e.Clock.Advance(2 * time.Minute)
	if _, err := e.V.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := e.V.GetApproval(ctx, e.Mgmt, ar.Change.ID)
	if err != nil || c.Status != tokenvault.ChangeExpired || c.DecidedAt == nil || c.DecidedByType != tokenvault.ActorSystem {
		t.Fatalf("after its expiry and a sweep: %+v, %v; want recorded expired by the system", c, err)
	}
	e.SettleChain(t)
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityApproval, EntityID: ar.Change.ID})
	if err != nil || len(logs.Data) == 0 || !strings.HasSuffix(logs.Data[0].Message, "expired: the change expired before it was approved") {
		t.Errorf("audit lines of the change: %+v, %v; want its expiry last", logs, err)
	}
}

// TestApprovalListPaged: the changes are listed oldest first by cursor.
func TestApprovalListPaged(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	var want []string
	for _, ap := range a.approvers {
		_, err := e.V.RegenerateApplicationKey(ctx, a.req, ap.ID)
		want = append(want, pending(t, "RegenerateApplicationKey", err).Change.ID)
	}
	var got []string
	req := tokenvault.ListApprovalsRequest{Status: tokenvault.ChangePending, PageRequest: tokenvault.PageRequest{Size: 2}}
	for range 3 {
		page, err := e.V.ListApprovals(ctx, a.approvers[0].Key, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Data {
			got = append(got, c.ID)
		}
		if req.Start = page.Pagination.After; req.Start == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages of ListApprovals = %v, want %v", got, want)
	}
}

// TestApprovalLoosenedRevealBudget: an update that lets an application
// reveal more than its reveal budget allows (the budget removed, more
// tokens, a shorter window, mask where it refused, no freeze) widens
// reveal, and waits for approval as a widened grant does; one that only
// tightens it applies at once. The approved change sets the budget asked.
func TestApprovalLoosenedRevealBudget(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := newApprovalEnv(t, e)
	budget := &tokenvault.RevealBudget{Tokens: 100, Window: "1h", Action: "refuse", Freeze: true}
	app, err := e.V.CreateApplication(ctx, a.req, tokenvault.CreateApplicationRequest{Name: "reader", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenRead}, RevealBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	update := func(b *tokenvault.RevealBudget) error {
		_, err := e.V.UpdateApplication(ctx, a.req, app.ID, tokenvault.UpdateApplicationRequest{Name: "reader",
			Permissions: []string{tokenvault.PermTokenRead}, RevealBudget: b})
		return err
	}
	for name, b := range map[string]*tokenvault.RevealBudget{
		"removed":        {Tokens: 0},
		"more tokens":    {Tokens: 101, Window: "1h", Action: "refuse", Freeze: true},
		"shorter window": {Tokens: 100, Window: "30m", Action: "refuse", Freeze: true},
		"mask":           {Tokens: 100, Window: "1h", Action: "mask", Freeze: true},
		"no freeze":      {Tokens: 100, Window: "1h", Action: "refuse"},
	} {
		pending(t, "UpdateApplication with the budget "+name, update(b))
	}
	if err := update(&tokenvault.RevealBudget{Tokens: 50, Window: "2h", Action: "refuse", Freeze: true}); err != nil {
		t.Fatalf("UpdateApplication tightening the budget = %v, want it applied at once", err)
	}
	ar := pending(t, "UpdateApplication removing the budget", update(&tokenvault.RevealBudget{Tokens: 0}))
	for _, approver := range a.approvers[:2] {
		if _, err := e.V.ApproveChange(ctx, approver.Key, ar.Change.ID); err != nil {
			t.Fatalf("ApproveChange: %v", err)
		}
	}
	got, err := e.V.GetApplication(ctx, e.Mgmt, app.ID)
	if err != nil || got.RevealBudget != nil {
		t.Fatalf("after the approved removal: %+v, %v; want no budget", got, err)
	}
}
