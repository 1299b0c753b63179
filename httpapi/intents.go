package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// intentRoutes serve token intents (tokenvault's intents.go): no list,
// by design; a token intent is converted through POST /tokens or
// /tokenize with token_intent_id.
func (a *api) intentRoutes() {
	a.handle("POST /token-intents", a.createTokenIntent)
	a.handle("GET /token-intents/{id}", a.getTokenIntent)
	a.handle("DELETE /token-intents/{id}", a.deleteTokenIntent)
}

func (a *api) createTokenIntent(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.TokenIntentRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateTokenIntent(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) getTokenIntent(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetTokenIntent(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) deleteTokenIntent(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteTokenIntent(r.Context(), apiKey(r), r.PathValue("id")))
}
