package tenants_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestListMembers(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	ada := e.Member(t, m, "ada@example.com")
	bob := e.Member(t, m, "bob@example.com")
	page, err := e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{})
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
	page, err = e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{UserIDs: []string{ada.User.ID, bob.User.ID}})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != ada.ID || page.Data[1].ID != bob.ID {
		t.Errorf("filtered by two user ids = %+v, %v", page, err)
	}
	_, err = e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{UserIDs: []string{ada.User.ID, "nope"}})
	vaulttest.WantField(t, err, "user_id[1]")
	if _, err := e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Size: 50}}); err != nil {
		t.Errorf("size 50: %v", err)
	}
	_, err = e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Size: 51}})
	vaulttest.WantField(t, err, "size")
	page, _ = e.V.ListMembers(ctx, e.Mgmt, tokenvault.ListMembersRequest{PageRequest: tokenvault.PageRequest{Page: 2, Size: 2}})
	if len(page.Data) != 1 || page.Pagination.TotalItems != 3 {
		t.Errorf("page 2 = %+v", page)
	}
	_, err = e.V.ListMembers(ctx, e.MgmtWith(t, tokenvault.PermLogRead), tokenvault.ListMembersRequest{})
	vaulttest.WantKind(t, "ListMembers without tenant:member:read", err, tokenvault.PermissionDenied)
}

func TestDeleteMember(t *testing.T) {
	e, m := vaulttest.NewMailEnv(t)
	ada := e.Member(t, m, "ada@example.com")
	err := e.V.DeleteMember(ctx, e.MgmtWith(t, tokenvault.PermTenantMemberRead), ada.ID)
	vaulttest.WantKind(t, "DeleteMember without tenant:member:delete", err, tokenvault.PermissionDenied)
	other := e.Tenant(t, "Other")
	err = e.V.DeleteMember(ctx, other.Application.Key, ada.ID)
	vaulttest.WantKind(t, "DeleteMember of another tenant", err, tokenvault.NotFound)
	err = e.V.DeleteMember(ctx, e.Mgmt, e.Boot.Owner.ID)
	vaulttest.WantKind(t, "DeleteMember(OWNER)", err, tokenvault.Conflict)

	if err := e.V.DeleteMember(ctx, e.Mgmt, ada.ID); err != nil {
		t.Fatalf("DeleteMember: %v", err)
	}
	_, err = e.V.Membership(ctx, e.Boot.Tenant.ID, ada.User.ID)
	vaulttest.WantKind(t, "Membership of a removed member", err, tokenvault.NotFound)
	if _, err := e.V.Membership(ctx, e.Boot.Tenant.ID, e.Boot.Owner.User.ID); err != nil {
		t.Errorf("Membership(owner): %v", err)
	}
	err = e.V.DeleteMember(ctx, e.Mgmt, ada.ID)
	vaulttest.WantKind(t, "deleting twice", err, tokenvault.NotFound)
	logs, _ := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "tenant_member", EntityID: ada.ID})
	if len(logs.Data) != 2 || logs.Data[0].Message != "Member removed" || logs.Data[1].Message != "Member joined by invitation" {
		t.Errorf("member logs = %+v", logs.Data)
	}
	// A removed member may be invited again.
	e.Member(t, m, "ada@example.com")
}
