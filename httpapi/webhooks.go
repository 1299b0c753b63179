package httpapi

import (
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// webhookRoutes serve webhook subscriptions (tokenvault's webhooks.go).
// The secret is in the answers of POST /webhooks and rotate-secret only.
func (a *api) webhookRoutes() {
	a.handle("POST /webhooks", a.createWebhook)
	a.handle("GET /webhooks", a.listWebhooks, list()...)
	a.handle("GET /webhooks/event-types", a.webhookEventTypes)
	a.handle("GET /webhooks/{id}", a.getWebhook)
	a.handle("PUT /webhooks/{id}", a.updateWebhook)
	a.handle("DELETE /webhooks/{id}", a.deleteWebhook)
	a.handle("POST /webhooks/{id}/rotate-secret", a.rotateWebhookSecret)
}

func (a *api) createWebhook(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.WebhookRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateWebhook(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listWebhooks(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListWebhooks(r.Context(), apiKey(r), tokenvault.ListWebhooksRequest{PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) webhookEventTypes(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.ListWebhookEventTypes(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

func (a *api) getWebhook(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetWebhook(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateWebhook(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.WebhookRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateWebhook(r.Context(), apiKey(r), r.PathValue("id"), req)
	a.reply(w, r, out, err)
}

func (a *api) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteWebhook(r.Context(), apiKey(r), r.PathValue("id")))
}

func (a *api) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.RotateWebhookSecret(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}
