package httpapi

import (
	"net/http"
	"strings"

	"github.com/tokenvault/tokenvault"
)

func (a *api) tokenRoutes() {
	a.handle("POST /tokenize", a.tokenize)
	a.handle("POST /detokenize", a.detokenize)
	a.handle("POST /tokens", a.createToken)
	a.handle("GET /tokens", a.listTokens, list("id", "container", "type", "fingerprint", "metadata.*")...)
	a.handle("POST /tokens/search", a.searchTokens)
	a.handle("GET /tokens/{id}", a.getToken)
	a.handle("PATCH /tokens/{id}", a.updateToken)
	a.handle("DELETE /tokens/{id}", a.deleteToken)
	a.tokenAccessRoutes()
}

func (a *api) tokenize(w http.ResponseWriter, r *http.Request) {
	body, err := a.decodeDoc(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.Tokenize(r.Context(), apiKey(r), body)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) detokenize(w http.ResponseWriter, r *http.Request) {
	body, err := a.decodeDoc(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	var out any
	if id := r.Header.Get(ApprovalIDHeader); id != "" {
		out, err = a.v.DetokenizeApproved(r.Context(), apiKey(r), id, body)
	} else {
		out, err = a.v.Detokenize(r.Context(), apiKey(r), body)
	}
	a.reply(w, r, out, err)
}

// ApprovalIDHeader names, on POST /detokenize and DELETE /tenants/self,
// the approved change of a call held to approval
// (tokenvault.DetokenizeApproved, DeleteOwnTenantApproved).
const ApprovalIDHeader = "SVC-APPROVAL-ID"

func (a *api) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.TokenRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateToken(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) getToken(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetToken(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateToken(w http.ResponseWriter, r *http.Request) {
	patch, err := a.decodeMergePatch(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateToken(r.Context(), apiKey(r), r.PathValue("id"), patch)
	a.reply(w, r, out, err)
}

func (a *api) deleteToken(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteToken(r.Context(), apiKey(r), r.PathValue("id")))
}

// listTokens reads the filters id (repeated), container, type, fingerprint
// and metadata.<key> from the query.
func (a *api) listTokens(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	req := tokenvault.ListTokensRequest{
		IDs: q["id"], Container: q.Get("container"), Type: q.Get("type"),
		Fingerprint: q.Get("fingerprint"), PageRequest: page,
	}
	for name, values := range q {
		if key, ok := strings.CutPrefix(name, "metadata."); ok && len(values) > 0 {
			if req.Metadata == nil {
				req.Metadata = map[string]string{}
			}
			req.Metadata[key] = values[0]
		}
	}
	out, err := a.v.ListTokens(r.Context(), apiKey(r), req)
	a.reply(w, r, out, err)
}

// searchBody is the body of POST /tokens/search.
type searchBody struct {
	Query string `json:"query"`
	Page  int    `json:"page"`
	Size  int    `json:"size"`
	Start string `json:"start"`
}

func (a *api) searchTokens(w http.ResponseWriter, r *http.Request) {
	var body searchBody
	if err := a.decodeJSON(w, r, &body); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.SearchTokens(r.Context(), apiKey(r), tokenvault.SearchTokensRequest{
		Query: body.Query, PageRequest: tokenvault.PageRequest{Page: body.Page, Size: body.Size, Start: body.Start},
	})
	a.reply(w, r, out, err)
}
