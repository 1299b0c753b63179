package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// Who saw a token (tokenvault.TokenAccess, SubjectAccess): GET
// /tokens/{id}/access, and POST /tokens/access/search for a data subject's
// tokens by metadata (a POST, as /tokens/search: GET /tokens/access would
// take the place of a token whose custom id is "access").
func (a *api) tokenAccessRoutes() {
	a.handle("GET /tokens/{id}/access", a.tokenAccess, list()...)
	a.handle("POST /tokens/access/search", a.subjectAccess)
}

func (a *api) tokenAccess(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.TokenAccessPage(r.Context(), apiKey(r), r.PathValue("id"), page)
	a.reply(w, r, out, err)
}

// subjectAccessBody is the body of POST /tokens/access/search.
type subjectAccessBody struct {
	Metadata map[string]string `json:"metadata"`
	Page     int               `json:"page"`
	Size     int               `json:"size"`
	Start    string            `json:"start"`
}

func (a *api) subjectAccess(w http.ResponseWriter, r *http.Request) {
	var body subjectAccessBody
	if err := a.decodeJSON(w, r, &body); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.SubjectAccess(r.Context(), apiKey(r), tokenvault.SubjectAccessRequest{
		Metadata: body.Metadata, PageRequest: tokenvault.PageRequest{Page: body.Page, Size: body.Size, Start: body.Start},
	})
	a.reply(w, r, out, err)
}
