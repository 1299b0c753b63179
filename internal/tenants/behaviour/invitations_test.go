package tenants_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestCreateInvitation(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	inv := e.Invite(t, "ada@example.com")
	want := tokenvault.Invitation{
		ID: inv.ID, TenantID: e.Boot.Tenant.ID, Email: "ada@example.com", Status: "PENDING",
		ExpiresAt: e.Clock.Now().Add(72 * time.Hour), CreatedBy: e.Boot.Application.ID, CreatedAt: e.Clock.Now(),
	}
	if diff := cmp.Diff(&want, inv); diff != "" {
		t.Errorf("invitation (-want +got):\n%s", diff)
	}
	mail := m.Last(t)
	if mail.To != "ada@example.com" || mail.TenantName != "Acme" || mail.InvitationID != inv.ID || !mail.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("mail = %+v", mail)
	}
	u, err := url.Parse(mail.AcceptURL)
	if err != nil || u.Host != "app.example.com" || u.Query().Get("token") != mail.Token || u.Query().Get("from") != "mail" || !strings.HasPrefix(mail.Token, "inv_") {
		t.Errorf("accept URL = %q, token %q", mail.AcceptURL, mail.Token)
	}
	for k, v := range vaulttest.Dump(t, e.Store) {
		if strings.Contains(k, mail.Token) || strings.Contains(string(v), mail.Token) {
			t.Errorf("store entry %s holds the link token in the clear", k)
		}
	}
	got, err := e.V.GetInvitation(ctx, e.Mgmt, inv.ID)
	if err != nil || got.Status != "PENDING" {
		t.Errorf("GetInvitation = %+v, %v", got, err)
	}
}

func TestInvitationEmailValidation(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	for _, email := range []string{
		"", "not-an-email", "Ada <ada@example.com>", "<ada@example.com>", " ada@example.com",
		"ada@example.com ", "ada@", "@example.com", "a b@example.com", strings.Repeat("a", 250) + "@example.com",
	} {
		_, err := e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: email})
		vaulttest.WantField(t, err, "email")
	}
	if m.Count() != 0 {
		t.Errorf("%d e-mails sent for invalid addresses", m.Count())
	}
	for _, email := range []string{"ada+vault@example.co.uk", "o'brien@example.com", "x@[127.0.0.1]"} {
		e.Invite(t, email)
	}
}

func TestInvitationConflicts(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	_, err := e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "owner@example.com"})
	vaulttest.WantKind(t, "inviting a member's address", err, tokenvault.Conflict)
	e.Invite(t, "ada@example.com")
	_, err = e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "ADA@example.com"})
	vaulttest.WantKind(t, "inviting an address with a pending invitation", err, tokenvault.Conflict)
	e.Clock.Advance(73 * time.Hour)
	_, err = e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	vaulttest.WantKind(t, "inviting an address with an expired invitation", err, tokenvault.Conflict)
	if m.Count() != 1 {
		t.Errorf("%d e-mails sent, want only the first", m.Count())
	}
	// The same address in another tenant is another invitation.
	other := e.Tenant(t, "Other")
	if _, err := e.V.CreateInvitation(ctx, other.Application.Key, tokenvault.CreateInvitationRequest{Email: "ada@example.com"}); err != nil {
		t.Errorf("inviting the address to another tenant: %v", err)
	}
}

func TestInvitationMailFailureSavesNothing(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	inv := e.Invite(t, "ada@example.com")
	e.SettleChain(t) // the lines so far linked, so that the linker changes nothing below
	before := vaulttest.Dump(t, e.Store)
	m.Fail(errors.New("smtp: 421 try again later"))
	_, err := e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "bob@example.com"})
	vaulttest.WantKind(t, "CreateInvitation with a failing Mailer", err, tokenvault.Unavailable)
	if strings.Contains(err.Error(), "421") {
		t.Errorf("error %q passes on the Mailer's message", err)
	}
	_, err = e.V.ResendInvitation(ctx, e.Mgmt, inv.ID)
	vaulttest.WantKind(t, "ResendInvitation with a failing Mailer", err, tokenvault.Unavailable)
	if diff := cmp.Diff(before, vaulttest.Dump(t, e.Store)); diff != "" {
		t.Errorf("a failed e-mail changed the store:\n%s", diff)
	}
	// The link of the first e-mail still works: the failed resend did not
	// replace it.
	m.Fail(nil)
	if _, err := e.V.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{}); err != nil {
		t.Errorf("AcceptInvitation after a failed resend: %v", err)
	}

	noMailer := vaulttest.NewEnv(t)
	_, err = noMailer.V.CreateInvitation(ctx, noMailer.Mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	vaulttest.WantKind(t, "CreateInvitation without a Mailer", err, tokenvault.Unavailable)
}

func TestInvitationPermissions(t *testing.T) {
	e, _ := vaulttest.NewMailEnv(t)
	inv := e.Invite(t, "ada@example.com")
	none := e.MgmtWith(t, tokenvault.PermLogRead)
	createOnly := e.MgmtWith(t, tokenvault.PermTenantInvitationCreate)
	updateOnly := e.MgmtWith(t, tokenvault.PermTenantInvitationUpdate)
	both := e.MgmtWith(t, tokenvault.PermTenantInvitationCreate, tokenvault.PermTenantInvitationUpdate)

	_, err := e.V.CreateInvitation(ctx, none, tokenvault.CreateInvitationRequest{Email: "x@example.com"})
	vaulttest.WantKind(t, "CreateInvitation without tenant:invitation:create", err, tokenvault.PermissionDenied)
	_, err = e.V.GetInvitation(ctx, none, inv.ID)
	vaulttest.WantKind(t, "GetInvitation without tenant:invitation:read", err, tokenvault.PermissionDenied)
	_, err = e.V.ListInvitations(ctx, none, tokenvault.ListInvitationsRequest{})
	vaulttest.WantKind(t, "ListInvitations without tenant:invitation:read", err, tokenvault.PermissionDenied)
	err = e.V.DeleteInvitation(ctx, none, inv.ID)
	vaulttest.WantKind(t, "DeleteInvitation without tenant:invitation:delete", err, tokenvault.PermissionDenied)
	for name, key := range map[string]tokenvault.Credential{"create only": createOnly, "update only": updateOnly} {
		_, err = e.V.ResendInvitation(ctx, key, inv.ID)
		vaulttest.WantKind(t, "ResendInvitation with "+name, err, tokenvault.PermissionDenied)
	}
	if _, err := e.V.ResendInvitation(ctx, both, inv.ID); err != nil {
		t.Errorf("ResendInvitation with create and update: %v", err)
	}
	// Another tenant's invitation does not exist for this tenant.
	other := e.Tenant(t, "Other")
	_, err = e.V.GetInvitation(ctx, other.Application.Key, inv.ID)
	vaulttest.WantKind(t, "GetInvitation of another tenant", err, tokenvault.NotFound)
	err = e.V.DeleteInvitation(ctx, other.Application.Key, inv.ID)
	vaulttest.WantKind(t, "DeleteInvitation of another tenant", err, tokenvault.NotFound)
}

func TestListInvitations(t *testing.T) {
	e, _ := vaulttest.NewMailEnv(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, e.Invite(t, string(rune('a'+i))+"@example.com").ID)
	}
	page, err := e.V.ListInvitations(ctx, e.Mgmt, tokenvault.ListInvitationsRequest{PageRequest: tokenvault.PageRequest{Page: 2, Size: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != ids[2] || page.Pagination.TotalItems != 3 || page.Pagination.TotalPages != 2 {
		t.Errorf("page 2 of size 2 = %+v", page)
	}
	if _, err := e.V.ListInvitations(ctx, e.Mgmt, tokenvault.ListInvitationsRequest{PageRequest: tokenvault.PageRequest{Size: 100}}); err != nil {
		t.Errorf("size 100: %v", err)
	}
	_, err = e.V.ListInvitations(ctx, e.Mgmt, tokenvault.ListInvitationsRequest{PageRequest: tokenvault.PageRequest{Size: 101}})
	vaulttest.WantField(t, err, "size")
}

// The transitions of the spec's Tenant Invitation table, and expiry.
func TestInvitationLifecycle(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	status := func(id string) string {
		t.Helper()
		inv, err := e.V.GetInvitation(ctx, e.Mgmt, id)
		if err != nil {
			t.Fatalf("GetInvitation: %v", err)
		}
		return inv.Status
	}

	t.Run("PENDING expires at expires_at, before and after the sweep", func(t *testing.T) {
		inv := e.Invite(t, "exp@example.com")
		e.Clock.Advance(72*time.Hour - time.Nanosecond)
		if got := status(inv.ID); got != "PENDING" {
			t.Fatalf("a nanosecond before expiry: %s", got)
		}
		e.Clock.Advance(time.Nanosecond)
		if got := status(inv.ID); got != "EXPIRED" {
			t.Fatalf("at expires_at: %s, want EXPIRED", got)
		}
		list, _ := e.V.ListInvitations(ctx, e.Mgmt, tokenvault.ListInvitationsRequest{})
		if list.Data[len(list.Data)-1].Status != "EXPIRED" {
			t.Errorf("list status = %s", list.Data[len(list.Data)-1].Status)
		}
		_, err := e.V.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{})
		vaulttest.WantKind(t, "accepting an expired invitation", err, tokenvault.NotFound)
		if n, err := e.V.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1", n, err)
		}
		if n, _ := e.V.Sweep(ctx); n != 0 {
			t.Errorf("second Sweep marked %d again", n)
		}
		if got := status(inv.ID); got != "EXPIRED" {
			t.Errorf("after the sweep: %s", got)
		}
		logs, _ := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "tenant_invitation", EntityID: inv.ID})
		if logs.Data[1].Message != "Invitation expired" || logs.Data[1].ActorType != tokenvault.ActorSystem {
			t.Errorf("logs = %+v, want the sweeper's \"Invitation expired\"", logs.Data)
		}

		// EXPIRED -> PENDING by resend: 72 hours from now.
		oldToken := m.Last(t).Token
		e.Clock.Advance(time.Hour)
		got, err := e.V.ResendInvitation(ctx, e.Mgmt, inv.ID)
		if err != nil {
			t.Fatalf("ResendInvitation(expired): %v", err)
		}
		if got.Status != "PENDING" || !got.ExpiresAt.Equal(e.Clock.Now().Add(72*time.Hour)) {
			t.Errorf("resent expired invitation = %+v", got)
		}
		if status(inv.ID) != "PENDING" {
			t.Error("stored status is not PENDING after resend")
		}
		_, err = e.V.AcceptInvitation(ctx, oldToken, tokenvault.User{})
		vaulttest.WantKind(t, "the link before the resend", err, tokenvault.NotFound)
		if _, err := e.V.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{}); err != nil {
			t.Errorf("the resent link: %v", err)
		}
	})

	t.Run("PENDING resend extends by 72 hours and replaces the link", func(t *testing.T) {
		inv := e.Invite(t, "resend@example.com")
		first := m.Last(t).Token
		e.Clock.Advance(time.Hour)
		got, err := e.V.ResendInvitation(ctx, e.Mgmt, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.ExpiresAt.Equal(inv.ExpiresAt.Add(72*time.Hour)) || got.Status != "PENDING" || got.ModifiedAt == nil {
			t.Errorf("resent = %+v, want expires_at %v", got, inv.ExpiresAt.Add(72*time.Hour))
		}
		second := m.Last(t)
		if second.Token == first || second.To != "resend@example.com" {
			t.Errorf("resend mail = %+v", second)
		}
		_, err = e.V.AcceptInvitation(ctx, first, tokenvault.User{})
		vaulttest.WantKind(t, "the link before the resend", err, tokenvault.NotFound)
		// Still PENDING where the first expiry would have passed.
		e.Clock.Advance(100 * time.Hour)
		if status(inv.ID) != "PENDING" {
			t.Error("resent invitation expired at its old expiry")
		}
		if n, _ := e.V.Sweep(ctx); n != 0 {
			t.Errorf("Sweep marked %d at the old expiry", n)
		}
		if err := e.V.DeleteInvitation(ctx, e.Mgmt, inv.ID); err != nil {
			t.Fatal(err)
		}
	})

	for _, expired := range []bool{false, true} {
		name := "PENDING"
		if expired {
			name = "EXPIRED"
		}
		t.Run("delete "+name+" invalidates the link", func(t *testing.T) {
			inv := e.Invite(t, "del-"+strings.ToLower(name)+"@example.com")
			token := m.Last(t).Token
			if expired {
				e.Clock.Advance(80 * time.Hour)
				e.V.Sweep(ctx)
			}
			if err := e.V.DeleteInvitation(ctx, e.Mgmt, inv.ID); err != nil {
				t.Fatal(err)
			}
			_, err := e.V.GetInvitation(ctx, e.Mgmt, inv.ID)
			vaulttest.WantKind(t, "GetInvitation after delete", err, tokenvault.NotFound)
			_, err = e.V.AcceptInvitation(ctx, token, tokenvault.User{})
			vaulttest.WantKind(t, "the link of a deleted invitation", err, tokenvault.NotFound)
			_, err = e.V.ResendInvitation(ctx, e.Mgmt, inv.ID)
			vaulttest.WantKind(t, "resending a deleted invitation", err, tokenvault.NotFound)
			for k := range vaulttest.Dump(t, e.Store) {
				if strings.HasPrefix(k, "sys/invite/") || strings.HasPrefix(k, "sys/expiry/") {
					t.Errorf("deleted invitation left %s", k)
				}
			}
		})
	}
}

func TestAcceptInvitation(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	inv := e.Invite(t, "ada@example.com")
	token := m.Last(t).Token
	_, err := e.V.AcceptInvitation(ctx, token, tokenvault.User{ID: "not-a-uuid"})
	vaulttest.WantField(t, err, "user.id")
	_, err = e.V.AcceptInvitation(ctx, token, tokenvault.User{ID: e.Boot.Owner.User.ID})
	vaulttest.WantKind(t, "accepting as a user who is a member already", err, tokenvault.Conflict)
	// Another member's address, case aside, as CreateInvitation refuses it.
	owner := strings.ToUpper(e.Boot.Owner.User.Email)
	if owner == "" {
		t.Fatal("the test tenant's owner has no e-mail address")
	}
	_, err = e.V.AcceptInvitation(ctx, token, tokenvault.User{Email: owner})
	vaulttest.WantKind(t, "accepting with the owner's address", err, tokenvault.Conflict)
	for field, user := range map[string]tokenvault.User{
		"user.picture":    {Picture: "javascript:alert(1)"},
		"user.first_name": {FirstName: strings.Repeat("a", 201)},
		"user.email":      {Email: "Ada <ada@example.com>"},
	} {
		_, err = e.V.AcceptInvitation(ctx, token, user)
		vaulttest.WantField(t, err, field)
	}

	member, err := e.V.AcceptInvitation(ctx, token, tokenvault.User{FirstName: "Ada"})
	if err != nil {
		t.Fatalf("AcceptInvitation: %v", err)
	}
	if member.Role != "ADMIN" || member.TenantID != e.Boot.Tenant.ID || member.User.Email != "ada@example.com" || member.User.FirstName != "Ada" || member.User.ID == "" {
		t.Errorf("member = %+v", member)
	}
	_, err = e.V.GetInvitation(ctx, e.Mgmt, inv.ID)
	vaulttest.WantKind(t, "the accepted invitation", err, tokenvault.NotFound)
	_, err = e.V.AcceptInvitation(ctx, token, tokenvault.User{})
	vaulttest.WantKind(t, "accepting twice", err, tokenvault.NotFound)
	for _, bad := range []string{"", "inv_nope", strings.Repeat("x", 10000)} {
		_, err = e.V.AcceptInvitation(ctx, bad, tokenvault.User{})
		vaulttest.WantKind(t, "an unknown link", err, tokenvault.NotFound)
	}
	got, err := e.V.Membership(ctx, e.Boot.Tenant.ID, member.User.ID)
	if err != nil || got.ID != member.ID {
		t.Errorf("Membership = %+v, %v", got, err)
	}
	// The address is now a member's.
	_, err = e.V.CreateInvitation(ctx, e.Mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	vaulttest.WantKind(t, "inviting the new member", err, tokenvault.Conflict)
}
