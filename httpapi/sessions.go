package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

func (a *api) sessionRoutes() {
	a.handle("POST /sessions", a.createSession)
	a.handle("POST /sessions/authorize", a.authorizeSession)
}

// createSession takes no body: a body is ignored rather than refused, as
// clients of the service this one follows send "{}".
func (a *api) createSession(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.CreateSession(r.Context(), apiKey(r))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) authorizeSession(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.AuthorizeSessionRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.noContent(w, r, a.v.AuthorizeSession(r.Context(), apiKey(r), req))
}
