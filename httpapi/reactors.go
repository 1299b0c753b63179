package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
)

func (a *api) reactorRoutes() {
	a.handle("POST /reactor-formulas", a.createFormula)
	a.handle("GET /reactor-formulas", a.listFormulas, list()...)
	a.handle("GET /reactor-formulas/{id}", a.getFormula)
	a.handle("PUT /reactor-formulas/{id}", a.updateFormula)
	a.handle("DELETE /reactor-formulas/{id}", a.deleteFormula)

	a.handle("POST /reactors", a.createReactor)
	a.handle("GET /reactors", a.listReactors, list("id", "name")...)
	a.handle("GET /reactors/{id}", a.getReactor)
	a.handle("PUT /reactors/{id}", a.updateReactor)
	a.handle("PATCH /reactors/{id}", a.patchReactor)
	a.handle("DELETE /reactors/{id}", a.deleteReactor)
	a.handle("POST /reactors/{id}/react", a.invokeReactor)

	a.handle("GET /tenants/self/webhook-secret", a.webhookSecret)
}

func (a *api) createFormula(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.FormulaRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateFormula(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listFormulas(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListFormulas(r.Context(), apiKey(r), tokenvault.ListFormulasRequest{PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getFormula(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetFormula(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateFormula(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.FormulaRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateFormula(r.Context(), apiKey(r), r.PathValue("id"), req)
	a.reply(w, r, out, err)
}

func (a *api) deleteFormula(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteFormula(r.Context(), apiKey(r), r.PathValue("id")))
}

func (a *api) createReactor(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.CreateReactorRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateReactor(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listReactors(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	out, err := a.v.ListReactors(r.Context(), apiKey(r), tokenvault.ListReactorsRequest{IDs: q["id"], Name: q.Get("name"), PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getReactor(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetReactor(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateReactor(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.UpdateReactorRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateReactor(r.Context(), apiKey(r), r.PathValue("id"), req)
	a.reply(w, r, out, err)
}

func (a *api) patchReactor(w http.ResponseWriter, r *http.Request) {
	patch, err := a.decodeMergePatch(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.noContent(w, r, a.v.PatchReactor(r.Context(), apiKey(r), r.PathValue("id"), patch))
}

func (a *api) deleteReactor(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteReactor(r.Context(), apiKey(r), r.PathValue("id")))
}

// invokeReactor answers 200 with {tokens, raw}, or 202 with
// {invocation_id} when the request has a callback_url.
func (a *api) invokeReactor(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Args        any    `json:"args"`
		CallbackURL string `json:"callback_url"`
		TimeoutMS   int    `json:"timeout_ms"`
	}
	depth, err := a.decodeJSONDepth(w, r, &req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	// The body was scanned and decoded once: the Vault takes its args as
	// they are (a jsoncheck.Doc). Any nesting in a body that decoded is
	// args', one level below the body's.
	var args any
	if req.Args != nil {
		args = jsoncheck.Checked(req.Args, max(0, depth-1))
	}
	out, err := a.v.InvokeReactor(r.Context(), apiKey(r), r.PathValue("id"), tokenvault.InvokeReactorRequest{
		Args: args, CallbackURL: req.CallbackURL, TimeoutMS: req.TimeoutMS,
	})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if out.InvocationID != "" {
		status = http.StatusAccepted
	}
	writeJSON(w, status, out)
}

func (a *api) webhookSecret(w http.ResponseWriter, r *http.Request) {
	s, err := a.v.WebhookSecret(r.Context(), apiKey(r))
	a.reply(w, r, map[string]string{"secret": s}, err)
}
