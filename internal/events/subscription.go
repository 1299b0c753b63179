package events

import "time"

// Subscription is a webhook as the API shows it (the root's
// WebhookSubscription). It is not the asynchronous reactor callback body,
// which is the root's Webhook.
type Subscription struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	URL      string `json:"url"`
	// Events are the catalogue names the webhook receives, or "*" for
	// every event that is not high-volume.
	Events []string `json:"events"`
	// Status is Enabled or Disabled.
	Status string `json:"status"`
	// NotifyEmail is told when the Vault disables the webhook.
	NotifyEmail string `json:"notify_email,omitempty"`
	// DisabledReason says why the Vault disabled the webhook: "gone" (its
	// receiver answered 410) or "failing" (no success for
	// WebhookOptions.DisableAfter); empty while enabled, or when a caller
	// disabled it.
	DisabledReason string `json:"disabled_reason,omitempty"`
	// Secret signs the deliveries ("whsec_" and the base64 of 32 random
	// bytes). It is in the answers of CreateWebhook and
	// RotateWebhookSecret only: keep it then, no read shows it again.
	Secret string `json:"secret,omitempty"`
	// PreviousSecretUntil, after a rotation, is until when deliveries are
	// signed with the secret before it too (WebhookOptions.SecretOverlap).
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
	CreatedBy           string     `json:"created_by,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	ModifiedBy          string     `json:"modified_by,omitempty"`
	ModifiedAt          *time.Time `json:"modified_at,omitempty"`
}

// Request is the body of the Vault's CreateWebhook and UpdateWebhook
// (the root's WebhookRequest). An
// update replaces every field: one left out takes its default.
type Request struct {
	// Name: 1 to 200 characters.
	Name string `json:"name"`
	// URL receives the events: absolute, https, without credentials or
	// fragment, naming a public host in ASCII (an international name in
	// its xn-- form; Unicode digits and dots are refused).
	// Options.Outbound.AllowPrivateDestinations allows private hosts, and
	// http to a loopback host only.
	URL string `json:"url"`
	// Events: one or more catalogue names (Types), or "*",
	// each once.
	Events []string `json:"events"`
	// Status is Enabled (the default) or Disabled.
	Status string `json:"status,omitempty"`
	// NotifyEmail, when set, is a bare e-mail address told when the Vault
	// disables the webhook: at a public ASCII domain name (not an address
	// literal, localhost or a special-use name), its local part in one
	// script. Only a member's address is told the webhook's name and URL
	// (WebhookDisabledMail).
	NotifyEmail string `json:"notify_email,omitempty"`
}

// Apply sets the fields req replaces in rec (Validate has checked req).
func (req *Request) Apply(rec *Webhook) {
	rec.Name, rec.URL, rec.Status, rec.NotifyEmail = req.Name, req.URL, req.Status, req.NotifyEmail
	rec.Events = append([]string(nil), req.Events...)
}

// API is the webhook the API shows at now: never its secrets (the
// answers of CreateWebhook and RotateWebhookSecret add the new one).
func (r *Webhook) API(now time.Time) *Subscription {
	w := &Subscription{ID: r.ID, TenantID: r.TenantID, Name: r.Name, URL: r.URL,
		Events: append([]string{}, r.Events...), Status: r.Status, NotifyEmail: r.NotifyEmail,
		DisabledReason: r.DisabledReason, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy}
	if !r.ModifiedAt.IsZero() {
		at := r.ModifiedAt
		w.ModifiedAt = &at
	}
	if r.PreviousSecret != "" && r.PreviousUntil.After(now) {
		until := r.PreviousUntil
		w.PreviousSecretUntil = &until
	}
	return w
}
