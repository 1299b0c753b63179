package tokenvault

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
)

// TenantStatistics are the figures of a tenant's overview: how many
// tokens, applications, reactors, proxies, webhooks and members it holds,
// which webhooks fail, and its audit chain's last signed checkpoint. It
// holds no token data and no token id: a key that manages the tenant
// (tenant:read) may read it without reading a token.
type TenantStatistics struct {
	Tokens       TokenStatistics   `json:"tokens"`
	Applications int               `json:"applications"`
	Reactors     int               `json:"reactors"`
	Proxies      int               `json:"proxies"`
	Members      int               `json:"members"`
	Invitations  int               `json:"invitations"`
	Webhooks     WebhookStatistics `json:"webhooks"`
	// AuditCheckpoint is the audit chain's last signed checkpoint, nil
	// before the first is signed.
	AuditCheckpoint *CheckpointSummary `json:"audit_checkpoint"`
}

// TokenStatistics count a tenant's tokens from the kept counts (nothing
// is read per token).
type TokenStatistics struct {
	Total int `json:"total"`
	// ByType has every token type, zero included.
	ByType map[string]int `json:"by_type"`
	// ByContainer counts, per container, the tokens that hold it (a token
	// with two containers is in both). Tokens whose shape (type and set
	// of containers) the tenant's registry of shapes had no room for are
	// in Unplaced instead.
	ByContainer map[string]int `json:"by_container"`
	Unplaced    int            `json:"unplaced"`
}

// WebhookStatistics count a tenant's webhooks: Failing are enabled ones
// whose deliveries fail now (no success since their last failure),
// Disabled those off, by a caller or by the Vault.
type WebhookStatistics struct {
	Total    int `json:"total"`
	Failing  int `json:"failing"`
	Disabled int `json:"disabled"`
}

// CheckpointSummary is when and up to which line the audit chain was
// last signed (GET /audit/chain and an audit export carry the whole
// checkpoint).
type CheckpointSummary struct {
	Seq       uint64    `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
	KeyID     string    `json:"key_id"`
}

// TenantStatistics returns the caller's tenant's figures. Requires
// tenant:read. It reads kept counts, the tenant's webhooks (at most
// WebhookOptions.MaxPerTenant) and one checkpoint: its cost does not
// grow with the tokens or the log, and it writes nothing.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:read, or
// Internal.
func (v *Vault) TenantStatistics(ctx context.Context, key Credential) (*TenantStatistics, error) {
	var out *TenantStatistics
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantRead)
		if err != nil {
			return err
		}
		tid := p.TenantID
		s := &TenantStatistics{}
		tc, err := v.lists.Counts(t.Tx, tid)
		if err != nil {
			return err
		}
		s.Tokens = TokenStatistics{Total: tc.Total, ByType: tc.ByType, ByContainer: tc.ByContainer, Unplaced: tc.Unplaced}
		for kind, n := range map[string]*int{barrier.KindApplication: &s.Applications, barrier.KindReactor: &s.Reactors,
			barrier.KindProxy: &s.Proxies, barrier.KindTenantMember: &s.Members, barrier.KindTenantInvitation: &s.Invitations} {
			if *n, err = t.ReadCount(barrier.Tenant(tid).Count(kind)); err != nil {
				return err
			}
		}
		hooks, err := events.TenantWebhooks(t.Tx, tid)
		if err != nil {
			return err
		}
		for _, h := range hooks {
			s.Webhooks.Total++
			switch {
			case h.Status != events.Enabled:
				s.Webhooks.Disabled++
			case !h.FailingSince.IsZero():
				s.Webhooks.Failing++
			}
		}
		cp, err := auditlog.LastCheckpoint(t.Tx, tid)
		if err != nil {
			return err
		}
		if cp != nil {
			s.AuditCheckpoint = &CheckpointSummary{Seq: cp.Seq, CreatedAt: cp.CreatedAt, KeyID: cp.KeyID}
		}
		out = s
		return nil
	})
	return out, err
}
