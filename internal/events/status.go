package events

// Webhook statuses (the status field of a webhook).
const (
	Enabled  = "enabled"
	Disabled = "disabled"
)

// Reasons the Vault disables a webhook (Webhook.DisabledReason).
const (
	DisabledGone    = "gone"
	DisabledFailing = "failing"
)

// Delivery statuses (Delivery.Status).
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)
