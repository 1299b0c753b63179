package client

import (
	"context"

	"github.com/tokenvault/tokenvault"
)

// FPEEncode calls POST /fpe/encode (tokenvault.Vault.FPEEncode).
func (c *Client) FPEEncode(ctx context.Context, key tokenvault.Credential, req tokenvault.FPERequest) (*tokenvault.FPEResult, error) {
	var out tokenvault.FPEResult
	return &out, c.do(ctx, call{method: "POST", path: "/fpe/encode", key: key, body: req, out: &out})
}

// FPEDecode calls POST /fpe/decode (tokenvault.Vault.FPEDecode).
func (c *Client) FPEDecode(ctx context.Context, key tokenvault.Credential, req tokenvault.FPERequest) (*tokenvault.FPEResult, error) {
	var out tokenvault.FPEResult
	return &out, c.do(ctx, call{method: "POST", path: "/fpe/decode", key: key, body: req, out: &out})
}

// RotateFPEKey calls POST /tenants/self/rotate-fpe-key
// (tokenvault.Vault.RotateFPEKey) and returns the new key version.
func (c *Client) RotateFPEKey(ctx context.Context, key tokenvault.Credential) (int, error) {
	var out struct {
		KeyVersion int `json:"key_version"`
	}
	err := c.do(ctx, call{method: "POST", path: "/tenants/self/rotate-fpe-key", key: key, out: &out})
	return out.KeyVersion, err
}
