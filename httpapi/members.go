package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

func (a *api) memberRoutes() {
	a.handle("GET /tenants/self/members", a.listMembers, list("user_id")...)
	a.handle("DELETE /tenants/self/members/{id}", a.deleteMember)

	a.handle("POST /tenants/self/invitations", a.createInvitation)
	a.handle("GET /tenants/self/invitations", a.listInvitations, list()...)
	a.handle("GET /tenants/self/invitations/{id}", a.getInvitation)
	a.handle("POST /tenants/self/invitations/{id}/resend", a.resendInvitation)
	a.handle("DELETE /tenants/self/invitations/{id}", a.deleteInvitation)
	a.handle("POST /tenants/invitations/accept", a.acceptInvitation)
}

func (a *api) listMembers(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListMembers(r.Context(), apiKey(r), tokenvault.ListMembersRequest{UserIDs: r.URL.Query()["user_id"], PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) deleteMember(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteMember(r.Context(), apiKey(r), r.PathValue("id")))
}

func (a *api) createInvitation(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.CreateInvitationRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateInvitation(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listInvitations(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListInvitations(r.Context(), apiKey(r), tokenvault.ListInvitationsRequest{PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getInvitation(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetInvitation(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) resendInvitation(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.ResendInvitation(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) deleteInvitation(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteInvitation(r.Context(), apiKey(r), r.PathValue("id")))
}

// AcceptInvitationRequest is the body of POST /tenants/invitations/accept,
// the one route that needs no API key: the link token is the credential.
type AcceptInvitationRequest struct {
	Token string          `json:"token"`
	User  tokenvault.User `json:"user"`
}

func (a *api) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	var req AcceptInvitationRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.AcceptInvitation(r.Context(), req.Token, req.User)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
