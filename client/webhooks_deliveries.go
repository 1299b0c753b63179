package client

import (
	"context"
	"net/url"

	"github.com/tokenvault/tokenvault"
)

// The deliveries of a webhook subscription (Vault.ListWebhookDeliveries,
// RedeliverWebhookDelivery, TestWebhook).

// ListWebhookDeliveries is GET /webhooks/{id}/deliveries.
func (c *Client) ListWebhookDeliveries(ctx context.Context, key tokenvault.Credential, webhookID string, req tokenvault.PageRequest) (*tokenvault.Page[tokenvault.WebhookDelivery], error) {
	var out tokenvault.Page[tokenvault.WebhookDelivery]
	q := pageQuery(url.Values{}, req)
	return &out, c.do(ctx, call{method: "GET", path: withQuery("/webhooks/"+esc(webhookID)+"/deliveries", clean(q)), key: key, out: &out})
}

// RedeliverWebhookDelivery is POST /webhooks/{id}/deliveries/{delivery_id}/redeliver.
func (c *Client) RedeliverWebhookDelivery(ctx context.Context, key tokenvault.Credential, webhookID, deliveryID string) (*tokenvault.WebhookDelivery, error) {
	var out tokenvault.WebhookDelivery
	return &out, c.do(ctx, call{method: "POST", path: "/webhooks/" + esc(webhookID) + "/deliveries/" + esc(deliveryID) + "/redeliver", key: key, out: &out})
}

// TestWebhook is POST /webhooks/{id}/test.
func (c *Client) TestWebhook(ctx context.Context, key tokenvault.Credential, webhookID string) (*tokenvault.WebhookDelivery, error) {
	var out tokenvault.WebhookDelivery
	return &out, c.do(ctx, call{method: "POST", path: "/webhooks/" + esc(webhookID) + "/test", key: key, out: &out})
}
