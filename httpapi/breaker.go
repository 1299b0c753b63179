package httpapi

import "net/http"

// unfreezeApplication releases an application frozen by the circuit
// breaker on reveals (Vault.UnfreezeApplication).
func (a *api) unfreezeApplication(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.UnfreezeApplication(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}
