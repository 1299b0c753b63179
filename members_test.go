package tokenvault_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

// member adds an ADMIN member through an invitation.
func (e *env) member(t *testing.T, m *testfake.Mailer, email string) *tokenvault.TenantMember {
	t.Helper()
	e.invite(t, email)
	mem, err := e.v.AcceptInvitation(ctx, m.Last(t).Token, tokenvault.User{})
	if err != nil {
		t.Fatalf("AcceptInvitation: %v", err)
	}
	return mem
}

func TestListMembers(t *testing.T) {
	e, m := newMailEnv(t)
	ada := e.member(t, m, "ada@example.com")
	bob := e.member(t, m, "bob@example.com")
	page, err := e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mem := range page.Data {
		got = append(got, mem.Role+" "+mem.User.Email)
	}
	if want := "OWNER owner@example.com,ADMIN ada@example.com,ADMIN bob@example.com"; strings.Join(got, ",") != want {
		t.Errorf("members = %s, want %s", strings.Join(got, ","), want)
	}
	page, err = e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{UserIDs: []string{ada.User.ID, bob.User.ID}})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != ada.ID || page.Data[1].ID != bob.ID {
		t.Errorf("filtered by two user ids = %+v, %v", page, err)
	}
	_, err = e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{UserIDs: []string{ada.User.ID, "nope"}})
	wantField(t, err, "user_id[1]")
	if _, err := e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Size: 50}}); err != nil {
		t.Errorf("size 50: %v", err)
	}
	_, err = e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Size: 51}})
	wantField(t, err, "size")
	page, _ = e.v.ListMembers(ctx, e.mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Page: 2, Size: 2}})
	if len(page.Data) != 1 || page.Pagination.TotalItems != 3 {
		t.Errorf("page 2 = %+v", page)
	}
	_, err = e.v.ListMembers(ctx, e.mgmtWith(t, tokenvault.PermLogRead), tokenvault.ListMembersRequest{})
	wantKind(t, "ListMembers without tenant:member:read", err, tokenvault.PermissionDenied)
}

func TestDeleteMember(t *testing.T) {
	e, m := newMailEnv(t)
	ada := e.member(t, m, "ada@example.com")
	err := e.v.DeleteMember(ctx, e.mgmtWith(t, tokenvault.PermTenantMemberRead), ada.ID)
	wantKind(t, "DeleteMember without tenant:member:delete", err, tokenvault.PermissionDenied)
	other := e.tenant(t, "Other")
	err = e.v.DeleteMember(ctx, other.Application.Key, ada.ID)
	wantKind(t, "DeleteMember of another tenant", err, tokenvault.NotFound)
	err = e.v.DeleteMember(ctx, e.mgmt, e.boot.Owner.ID)
	wantKind(t, "DeleteMember(OWNER)", err, tokenvault.Conflict)

	if err := e.v.DeleteMember(ctx, e.mgmt, ada.ID); err != nil {
		t.Fatalf("DeleteMember: %v", err)
	}
	_, err = e.v.Membership(ctx, e.boot.Tenant.ID, ada.User.ID)
	wantKind(t, "Membership of a removed member", err, tokenvault.NotFound)
	if _, err := e.v.Membership(ctx, e.boot.Tenant.ID, e.boot.Owner.User.ID); err != nil {
		t.Errorf("Membership(owner): %v", err)
	}
	err = e.v.DeleteMember(ctx, e.mgmt, ada.ID)
	wantKind(t, "deleting twice", err, tokenvault.NotFound)
	logs, _ := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EntityType: "tenant_member", EntityID: ada.ID})
	if len(logs.Data) != 2 || logs.Data[0].Message != "Member removed" || logs.Data[1].Message != "Member joined by invitation" {
		t.Errorf("member logs = %+v", logs.Data)
	}
	// A removed member may be invited again.
	e.member(t, m, "ada@example.com")
}
