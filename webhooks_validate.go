package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// validateWebhook checks req and fills its defaults (status enabled): its
// name and notify_email by the Vault's rules, the rest by
// events.Validate, which holds the URL to the outbound policy.
func (v *Vault) validateWebhook(req *WebhookRequest) error {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	events.Validate(req, v.outbound, fe)
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
