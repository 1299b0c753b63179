package tokenvault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/tokens"
)

// A detokenization of more distinct tokens than the policy's
// DetokenizeOver in one call (ApprovalDetokenizeBulk) waits for approval
// like any held operation; but what it returns cannot wait in a stored
// change, so its approval applies nothing: it lets its requester make
// exactly that call (the same body, by its digest) once, before the
// change's expiry, with DetokenizeApproved. The policy is one record read
// by each detokenization; nothing is written unless the call is held.

// DetokenizeApproved is Detokenize of a body held to approval
// (ApprovalDetokenizeBulk), with approvalID the id of its applied change:
// the same key, the same body, once, before the change's expiry.
//
// Returns what Detokenize returns (Invalid, Unauthenticated,
// PermissionDenied, RateLimited, StorageFull, Internal), and NotFound (no
// such change), PermissionDenied (another key's change), Conflict (not an
// applied bulk detokenization, another body, used already, expired).
func (v *Vault) DetokenizeApproved(ctx context.Context, key Credential, approvalID string, body any) (any, error) {
	if approvalID == "" {
		return nil, &Error{Kind: Invalid, Message: "an approval id is required"}
	}
	return v.detokenizeApproved(ctx, keyCredential(key), approvalID, body)
}

// bodyDigest names a detokenization's body in its change: the SHA-256 of
// its JSON (object keys in order), never the body.
func bodyDigest(doc any) (string, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// bulkView is what a held detokenization shows: how many tokens it reads,
// and which (ids are no secret); never the body.
type bulkView struct {
	Tokens   int      `json:"tokens"`
	TokenIDs []string `json:"token_ids"`
}

// holdBulkDetokenize spends approval approvalID on doc when it is given,
// or stores doc's detokenization as a pending change when the tenant's
// policy holds it (nil otherwise).
func (v *Vault) holdBulkDetokenize(t *txn, p *principal, doc any, approvalID string) (*ApprovalRequired, error) {
	if approvalID != "" {
		digest, err := bodyDigest(doc)
		if err != nil {
			return nil, err
		}
		return nil, approvals.Use(t.Tx, p.Actor(), p.TenantID, approvalID, digest)
	}
	pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
	if err != nil || !pol.Needs(approvals.OpDetokenizeBulk) {
		return nil, err
	}
	ids, err := tokens.TokenIDs(doc)
	if err != nil || len(ids) <= pol.DetokenizeOver {
		return nil, err
	}
	digest, err := bodyDigest(doc)
	if err != nil {
		return nil, err
	}
	return v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpDetokenizeBulk, Target: digest}, nil,
		bulkView{Tokens: len(ids), TokenIDs: ids}, changePayload{})
}
