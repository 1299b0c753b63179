package tokenvault

import (
	"slices"
	"strconv"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// validateWebhook checks req and fills its defaults (status enabled).
// The URL is held to the outbound policy (outbound.Policy.ReceiverProblem)
// here, at creation and update, and again at every delivery, on the
// address dialled.
func (v *Vault) validateWebhook(req *WebhookRequest) error {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	if req.URL == "" {
		fe.Add("url", "is required")
	} else if problem := v.outbound.ReceiverProblem(req.URL); problem != "" {
		fe.Add("url", "%s", problem)
	}
	validateWebhookEvents(req.Events, fe)
	switch req.Status {
	case "":
		req.Status = WebhookEnabled
	case WebhookEnabled, WebhookDisabled:
	default:
		fe.Add("status", "must be %s or %s", WebhookEnabled, WebhookDisabled)
	}
	if req.NotifyEmail != "" {
		validateNotifyEmail("notify_email", req.NotifyEmail, fe)
	}
	return fe.Err()
}

// validateNotifyEmail checks a webhook's notify_email: a bare address
// (validateEmail) at a public DNS name whose local part does not mix
// scripts (outbound.MailboxProblem).
func validateNotifyEmail(path, email string, fe unit.FieldErrors) {
	before := len(fe[path])
	validateEmail(path, email, fe)
	if len(fe[path]) > before {
		return
	}
	if problem := outbound.MailboxProblem(email); problem != "" {
		fe.Add(path, "%s", problem)
	}
}

// validateWebhookEvents checks a webhook's events: one or more, each a
// catalogue name or "*", none twice.
func validateWebhookEvents(events []string, fe unit.FieldErrors) {
	if len(events) == 0 {
		fe.Add("events", "must name one event type or more (GET /webhooks/event-types), or \"*\"")
		return
	}
	for i, e := range events {
		path := "events[" + strconv.Itoa(i) + "]"
		if _, ok := eventType(e); !ok && e != "*" {
			fe.Add(path, "is not an event type of the catalogue (GET /webhooks/event-types), nor \"*\"")
		} else if slices.Index(events, e) < i {
			fe.Add(path, "is named twice")
		}
	}
}
