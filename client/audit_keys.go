package client

import (
	"context"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
)

// The audit chain's signing keys and checkpoints (docs/audit-chain.md).

// AuditKeys returns the server's checkpoint signing keys, public parts
// only, oldest first (GET /audit/keys, which takes no key): what verifies
// the checkpoints of an audit export (auditchain.Checkpoint.VerifySignature).
func (c *Client) AuditKeys(ctx context.Context) ([]auditchain.PublicKey, error) {
	var out struct {
		Keys []auditchain.PublicKey `json:"keys"`
	}
	if err := c.do(ctx, call{method: "GET", path: "/audit/keys", out: &out}); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RotateAuditKey replaces the server's checkpoint signing key with a new
// one, which it returns; the old key stays published (operator key).
func (c *Client) RotateAuditKey(ctx context.Context, operatorKey tokenvault.Credential) (*auditchain.PublicKey, error) {
	var out auditchain.PublicKey
	return &out, c.do(ctx, call{method: "POST", path: "/operator/audit/keys/rotate", key: operatorKey, out: &out})
}

// SignAuditChain signs tenant tenantID's audit chain head now and returns
// the checkpoint, or the last one when every line is signed already
// (operator key). NotFound for an unknown tenant.
func (c *Client) SignAuditChain(ctx context.Context, operatorKey tokenvault.Credential, tenantID string) (*auditchain.Checkpoint, error) {
	var out auditchain.Checkpoint
	return &out, c.do(ctx, call{method: "POST", path: "/operator/tenants/" + esc(tenantID) + "/audit/checkpoints", key: operatorKey, out: &out})
}
