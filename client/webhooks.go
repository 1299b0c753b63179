package client

import (
	"context"
	"net/url"

	"github.com/tokenvault/tokenvault"
)

// Webhook subscriptions: as the Vault's methods of the same names (its
// webhooks.go). The secret is in the answers of CreateWebhook and
// RotateWebhookSecret only.

func (c *Client) CreateWebhook(ctx context.Context, key tokenvault.Credential, req tokenvault.WebhookRequest) (*tokenvault.WebhookSubscription, error) {
	var out tokenvault.WebhookSubscription
	return &out, c.do(ctx, call{method: "POST", path: "/webhooks", key: key, body: req, out: &out})
}

func (c *Client) GetWebhook(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.WebhookSubscription, error) {
	var out tokenvault.WebhookSubscription
	return &out, c.do(ctx, call{method: "GET", path: "/webhooks/" + esc(id), key: key, out: &out})
}

func (c *Client) ListWebhooks(ctx context.Context, key tokenvault.Credential, req tokenvault.ListWebhooksRequest) (*tokenvault.Page[tokenvault.WebhookSubscription], error) {
	var out tokenvault.Page[tokenvault.WebhookSubscription]
	q := pageQuery(url.Values{}, req.PageRequest)
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/webhooks", q), key: key, out: &out})
}

func (c *Client) UpdateWebhook(ctx context.Context, key tokenvault.Credential, id string, req tokenvault.WebhookRequest) (*tokenvault.WebhookSubscription, error) {
	var out tokenvault.WebhookSubscription
	return &out, c.do(ctx, call{method: "PUT", path: "/webhooks/" + esc(id), key: key, body: req, out: &out})
}

func (c *Client) DeleteWebhook(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/webhooks/" + esc(id), key: key})
}

func (c *Client) RotateWebhookSecret(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.WebhookSubscription, error) {
	var out tokenvault.WebhookSubscription
	return &out, c.do(ctx, call{method: "POST", path: "/webhooks/" + esc(id) + "/rotate-secret", key: key, out: &out})
}

func (c *Client) ListWebhookEventTypes(ctx context.Context, key tokenvault.Credential) ([]string, error) {
	var out []string
	return out, c.do(ctx, call{method: "GET", path: "/webhooks/event-types", key: key, out: &out})
}
