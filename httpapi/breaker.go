package httpapi

import (
	"errors"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// unfreezeApplication releases an application frozen by the circuit
// breaker on reveals (Vault.UnfreezeApplication).
func (a *api) unfreezeApplication(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.UnfreezeApplication(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

// createDecoy plants a decoy token (Vault.CreateDecoy): 201 with the
// decoy as GET /decoys shows it.
func (a *api) createDecoy(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.CreateDecoyRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateDecoy(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// decoysBody is the answer of GET /decoys.
type decoysBody struct {
	Data []tokenvault.Decoy `json:"data"`
}

// listDecoys lists the tenant's decoys (Vault.ListDecoys).
func (a *api) listDecoys(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.ListDecoys(r.Context(), apiKey(r))
	a.reply(w, r, decoysBody{Data: out}, err)
}

// breakerProblemType is the problem type of the circuit breaker's errors
// (tokenvault.KeyFrozenProblemType, RevealBudgetProblemType), or def for
// any other error.
func breakerProblemType(err error, def string) string {
	switch {
	case errors.Is(err, tokenvault.ErrKeyFrozen):
		return tokenvault.KeyFrozenProblemType
	case errors.Is(err, tokenvault.ErrRevealBudget):
		return tokenvault.RevealBudgetProblemType
	}
	return def
}
