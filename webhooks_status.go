package tokenvault

// Webhook statuses (the status field of a webhook).
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)
