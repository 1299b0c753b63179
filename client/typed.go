package client

import (
	"context"

	"github.com/tokenvault/tokenvault"
)

// TokenizeCard creates a card token, as Vault.TokenizeCard does in
// process (POST /tokens with type card).
func (c *Client) TokenizeCard(ctx context.Context, key tokenvault.Credential, card tokenvault.Card) (*tokenvault.Token, error) {
	return c.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: card})
}

// TokenizeValue creates a plain token holding value, as
// Vault.TokenizeValue does in process (POST /tokens with type token).
func (c *Client) TokenizeValue(ctx context.Context, key tokenvault.Credential, value any) (*tokenvault.Token, error) {
	return c.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: value})
}

// The client serves the Vault's generic helpers (tokenvault.TokenizeAs,
// tokenvault.DetokenizeAs) over HTTP.
var (
	_ tokenvault.TokenCreator = (*Client)(nil)
	_ tokenvault.TokenReader  = (*Client)(nil)
)
