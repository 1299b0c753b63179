package client

import (
	"context"

	"github.com/tokenvault/tokenvault"
)

// Token intents: as the Vault's methods of the same names (its
// intents.go). An intent is converted with CreateToken or Tokenize and a
// token request carrying TokenIntentID.

func (c *Client) CreateTokenIntent(ctx context.Context, key tokenvault.Credential, req tokenvault.TokenIntentRequest) (*tokenvault.TokenIntent, error) {
	req.ExpiresAt = inUTC(req.ExpiresAt)
	var out tokenvault.TokenIntent
	return &out, c.do(ctx, call{method: "POST", path: "/token-intents", key: key, body: req, out: &out})
}

func (c *Client) GetTokenIntent(ctx context.Context, key tokenvault.Credential, id string) (*tokenvault.TokenIntent, error) {
	var out tokenvault.TokenIntent
	return &out, c.do(ctx, call{method: "GET", path: "/token-intents/" + esc(id), key: key, out: &out})
}

func (c *Client) DeleteTokenIntent(ctx context.Context, key tokenvault.Credential, id string) error {
	return c.do(ctx, call{method: "DELETE", path: "/token-intents/" + esc(id), key: key})
}
