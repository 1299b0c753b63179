package httpapi

import (
	"net/http"
)

// The deliveries of a webhook subscription: recent attempts, a
// redelivery, and a test event (the root's webhooks.go, internal/events'
// deliveries.go).

func (a *api) webhookDeliveryRoutes() {
	a.handle("GET /webhooks/{id}/deliveries", a.listWebhookDeliveries, list()...)
	a.handle("POST /webhooks/{id}/deliveries/{delivery_id}/redeliver", a.redeliverWebhookDelivery)
	a.handle("POST /webhooks/{id}/test", a.testWebhook)
}

func (a *api) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListWebhookDeliveries(r.Context(), apiKey(r), r.PathValue("id"), page)
	a.reply(w, r, out, err)
}

// redeliverWebhookDelivery answers 202: the delivery is queued, not made.
func (a *api) redeliverWebhookDelivery(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.RedeliverWebhookDelivery(r.Context(), apiKey(r), r.PathValue("id"), r.PathValue("delivery_id"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}

// testWebhook answers 202 with the test event's delivery, queued.
func (a *api) testWebhook(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.TestWebhook(r.Context(), apiKey(r), r.PathValue("id"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}
