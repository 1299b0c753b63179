package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

func TestInvitationsAndMembersOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	box := &testfake.Mailer{}
	s := newServer(t, httpapi.Options{}, withClock(clock), func(o *tokenvault.Options) { o.Mailer = box })

	r := s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "Ada <ada@example.com>"})
	wantStatus(t, "invite a display-name address", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["email"] == nil {
		t.Errorf("errors = %v, want one on email", p.Errors)
	}
	r = s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "ada@example.com"})
	wantStatus(t, "POST /tenants/self/invitations", r, http.StatusCreated)
	var inv tokenvault.Invitation
	r.json(t, &inv)
	if inv.Status != "PENDING" || !inv.ExpiresAt.Equal(clock.Now().Add(72*time.Hour)) || box.Token() == "" {
		t.Fatalf("invitation = %s", r.body)
	}
	r = s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "ada@example.com"})
	wantStatus(t, "invite the same address again", r, http.StatusConflict)

	r = s.do(t, "GET", "/tenants/self/invitations?size=101", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/invitations?size=101", r, http.StatusBadRequest)
	r = s.do(t, "GET", "/tenants/self/invitations?size=100", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/invitations", r, http.StatusOK)
	var invs tokenvault.Page[tokenvault.Invitation]
	r.json(t, &invs)
	if len(invs.Data) != 1 || invs.Data[0].ID != inv.ID {
		t.Errorf("invitations = %s", r.body)
	}

	clock.Advance(72 * time.Hour)
	r = s.do(t, "GET", "/tenants/self/invitations/"+inv.ID, s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/invitations/{id}", r, http.StatusOK)
	r.json(t, &inv)
	if inv.Status != "EXPIRED" {
		t.Errorf("status at expires_at = %s", inv.Status)
	}
	expiredToken := box.Token()
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": expiredToken})
	wantStatus(t, "accept an expired invitation", r, http.StatusNotFound)

	_, createOnly := s.app(t, map[string]any{"name": "c", "type": "management", "permissions": []string{"tenant:invitation:create"}})
	r = s.do(t, "POST", "/tenants/self/invitations/"+inv.ID+"/resend", createOnly, nil)
	wantStatus(t, "resend without tenant:invitation:update", r, http.StatusForbidden)
	r = s.do(t, "POST", "/tenants/self/invitations/"+inv.ID+"/resend", s.mgmt, nil)
	wantStatus(t, "POST /tenants/self/invitations/{id}/resend", r, http.StatusOK)
	r.json(t, &inv)
	if inv.Status != "PENDING" || box.Token() == expiredToken {
		t.Errorf("resent = %s", r.body)
	}

	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": box.Token(), "user": map[string]any{"picture": "javascript:alert(1)"}})
	wantStatus(t, "accept with a javascript: picture", r, http.StatusBadRequest)
	if p := r.problem(t); len(p.Errors["user.picture"]) == 0 {
		t.Errorf("errors = %v, want user.picture", p.Errors)
	}
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": box.Token(), "user": map[string]any{"first_name": "Ada"}})
	wantStatus(t, "POST /tenants/invitations/accept", r, http.StatusCreated)
	var member tokenvault.TenantMember
	r.json(t, &member)
	if member.Role != "ADMIN" || member.User.Email != "ada@example.com" {
		t.Errorf("member = %s", r.body)
	}
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": box.Token()})
	wantStatus(t, "accept twice", r, http.StatusNotFound)
	// Another invitation accepted with a member's address, case aside.
	r = s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "carol@example.com"})
	wantStatus(t, "invite carol", r, http.StatusCreated)
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": box.Token(), "user": map[string]any{"email": strings.ToUpper(member.User.Email)}})
	wantStatus(t, "accept with a member's address", r, http.StatusConflict)
	r.problem(t)

	r = s.do(t, "GET", "/tenants/self/members?size=51", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/members?size=51", r, http.StatusBadRequest)
	r = s.do(t, "GET", "/tenants/self/members?user_id=not-a-uuid", s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/members?user_id=bad", r, http.StatusBadRequest)
	r = s.do(t, "GET", "/tenants/self/members?size=50&user_id="+member.User.ID+"&user_id="+s.boot.Owner.User.ID, s.mgmt, nil)
	wantStatus(t, "GET /tenants/self/members", r, http.StatusOK)
	var members tokenvault.Page[tokenvault.TenantMember]
	r.json(t, &members)
	if len(members.Data) != 2 || members.Data[0].Role != "OWNER" || members.Data[1].ID != member.ID {
		t.Errorf("members = %s", r.body)
	}

	r = s.do(t, "DELETE", "/tenants/self/members/"+s.boot.Owner.ID, s.mgmt, nil)
	wantStatus(t, "DELETE the OWNER", r, http.StatusConflict)
	if p := r.problem(t); p.Detail == "" {
		t.Error("no detail on the OWNER refusal")
	}
	r = s.do(t, "DELETE", "/tenants/self/members/"+member.ID, s.mgmt, nil)
	wantStatus(t, "DELETE /tenants/self/members/{id}", r, http.StatusNoContent)
	if _, err := s.v.Membership(context.Background(), s.boot.Tenant.ID, member.User.ID); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("Membership after delete = %v", err)
	}

	r = s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "bob@example.com"})
	wantStatus(t, "invite bob", r, http.StatusCreated)
	r.json(t, &inv)
	bobToken := box.Token()
	r = s.do(t, "DELETE", "/tenants/self/invitations/"+inv.ID, s.mgmt, nil)
	wantStatus(t, "DELETE /tenants/self/invitations/{id}", r, http.StatusNoContent)
	r = s.do(t, "POST", "/tenants/invitations/accept", "", map[string]any{"token": bobToken})
	wantStatus(t, "accept a deleted invitation", r, http.StatusNotFound)
}

func TestInvitationMailFailureOverHTTP(t *testing.T) {
	box := &testfake.Mailer{}
	box.Fail(errors.New("no route to smtp"))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Mailer = box })
	r := s.do(t, "POST", "/tenants/self/invitations", s.mgmt, map[string]any{"email": "ada@example.com"})
	wantStatus(t, "invite with a failing Mailer", r, http.StatusServiceUnavailable)
	r.problem(t)
	r = s.do(t, "GET", "/tenants/self/invitations", s.mgmt, nil)
	var invs tokenvault.Page[tokenvault.Invitation]
	r.json(t, &invs)
	if len(invs.Data) != 0 {
		t.Errorf("a failed invitation was saved: %s", r.body)
	}
}
