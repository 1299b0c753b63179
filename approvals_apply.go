package tokenvault

import (
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The operations held to approval, as pending changes: what each stores
// to apply later (its payload, sealed in the change's record and cleared
// once the change is decided), what it shows (before and after), and how
// it is applied with its last approval, as its requester, re-checked
// against the state of then (applyChange).

// changePayload is the request a change applies, as stored.
type changePayload struct {
	// Key is the key a created application or a regenerated key gets.
	Key         string       `json:"key,omitempty"`
	Name        string       `json:"name,omitempty"`
	Permissions []string     `json:"permissions,omitempty"`
	Rules       []AccessRule `json:"rules,omitempty"`
	ExpiresAt   *time.Time   `json:"expires_at,omitempty"`
	// AllowedOrigins, for an update: nil keeps them.
	AllowedOrigins *[]string `json:"allowed_origins,omitempty"`
	// RevealBudget, for an update: nil keeps it, 0 tokens removes it.
	RevealBudget *RevealBudget `json:"reveal_budget,omitempty"`
	// Before is the application's view as of the request, for an update:
	// the change applies only to the application as it was then.
	Before json.RawMessage `json:"before,omitempty"`
	// Policy is the new approval policy.
	Policy *ApprovalPolicy `json:"policy,omitempty"`
}

func policyPayload(req ApprovalPolicy, rec *approvals.Policy) changePayload {
	req.Approvers, req.Operations, req.TTLSeconds = rec.Approvers, rec.Operations, int(rec.TTL/time.Second)
	return changePayload{Policy: &req}
}

// requestChange stores c, requested by p under pol, with before, after
// and payload, and returns the *ApprovalRequired its call answers with.
func (v *Vault) requestChange(t *txn, p *principal, pol *approvals.Policy, c *approvals.Change, before, after any, payload changePayload) (*ApprovalRequired, error) {
	var err error
	c.ID, c.TenantID = v.ids.Next(t.Now), p.TenantID
	if c.Payload, err = json.Marshal(payload); err != nil {
		return nil, err
	}
	if before != nil {
		if c.Before, err = json.Marshal(before); err != nil {
			return nil, err
		}
	}
	if c.After, err = json.Marshal(after); err != nil {
		return nil, err
	}
	if err := approvals.Request(t.Tx, p.Actor(), pol, c); err != nil {
		return nil, err
	}
	return &ApprovalRequired{Change: approvals.ChangeOf(c, c.Status), Key: Credential(payload.Key)}, nil
}

// applyChange carries out c, approved, in t: as its requester (who must
// still exist and hold what the operation requires), against the state
// of now.
func (v *Vault) applyChange(t *txn, c *approvals.Change) error {
	if approvals.UsedOnce(c.Operation) {
		// Applied, it lets its requester make the call once
		// (DetokenizeApproved, DeleteOwnTenantApproved), which
		// authorizes it then: nothing changes now.
		return nil
	}
	var pl changePayload
	if err := json.Unmarshal(c.Payload, &pl); err != nil {
		return err
	}
	p, err := access.AsApplication(t.Tx, c.TenantID, c.RequestedBy)
	if err != nil {
		return &Error{Kind: Conflict, Message: "its requester no longer exists"}
	}
	need := map[string]string{
		approvals.OpCreateManagement: PermApplicationCreate,
		approvals.OpWidenGrants:      PermApplicationUpdate,
		approvals.OpRegenerateKey:    PermApplicationUpdate,
		approvals.OpUpdatePolicy:     PermTenantUpdate,
	}[c.Operation]
	if !p.Has(need) {
		return &Error{Kind: Conflict, Message: "its requester no longer holds " + need}
	}
	fe := unit.FieldErrors{}
	switch c.Operation {
	case approvals.OpCreateManagement:
		_, err := v.apps.Create(t.Tx, p, c.Target, pl.Key, access.Management,
			access.Grant{Name: pl.Name, Permissions: orEmpty(pl.Permissions), Rules: orEmptyRules(pl.Rules)}, pl.ExpiresAt, fe)
		return err
	case approvals.OpWidenGrants:
		rec, err := access.MustApplication(t.Tx, c.TenantID, c.Target)
		if err != nil {
			return err
		}
		now, err := json.Marshal(applicationOf(rec))
		if err != nil {
			return err
		}
		if string(now) != string(pl.Before) {
			return &Error{Kind: Conflict, Message: "the application changed since the request"}
		}
		_, err = v.apps.Replace(t.Tx, p, c.Target, access.Grant{Name: pl.Name, Permissions: orEmpty(pl.Permissions),
			Rules: orEmptyRules(pl.Rules), AllowedOrigins: pl.AllowedOrigins, RevealBudget: pl.RevealBudget}, fe)
		return err
	case approvals.OpRegenerateKey:
		_, err := v.apps.Regenerate(t.Tx, p, c.Target, pl.Key)
		return err
	case approvals.OpUpdatePolicy:
		req := pl.Policy
		rec := &approvals.Policy{TenantID: c.TenantID, Required: req.Required, Approvers: req.Approvers,
			Operations: req.Operations, TTL: time.Duration(req.TTLSeconds) * time.Second, DetokenizeOver: req.DetokenizeOver}
		if err := checkApprovers(t, rec, fe); err != nil {
			return err
		}
		return approvals.PutPolicy(t.Tx, p.Actor(), rec)
	}
	return &Error{Kind: Conflict, Message: "unknown operation " + c.Operation}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyRules(r []AccessRule) []AccessRule {
	if r == nil {
		return []AccessRule{}
	}
	return r
}

// createNeedsApproval stores the creation of management application id
// as a pending change when the tenant's policy holds it to approval (nil
// otherwise), after the checks the creation itself makes.
func (v *Vault) createNeedsApproval(t *txn, p *principal, id, apiKey string, req CreateApplicationRequest, perms []string, rules []AccessRule, fe unit.FieldErrors) (*ApprovalRequired, error) {
	pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
	if err != nil || !pol.Needs(approvals.OpCreateManagement) {
		return nil, err
	}
	if req.ExpiresAt != nil {
		unit.CheckExpiry(*req.ExpiresAt, t.Now, "expires_at", fe)
	}
	if len(req.AllowedOrigins) > 0 {
		fe.Add("allowed_origins", "is only for public applications")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if !p.Covers(perms) {
		return nil, unit.Errorf(unit.PermissionDenied, "a management application can only be given permissions the caller holds")
	}
	after := &Application{ID: id, TenantID: p.TenantID, Name: req.Name, Type: Management, Permissions: perms, Rules: rules, ExpiresAt: req.ExpiresAt}
	return v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpCreateManagement, Target: id}, nil, after,
		changePayload{Key: apiKey, Name: req.Name, Permissions: perms, Rules: rules, ExpiresAt: req.ExpiresAt})
}

// updateNeedsApproval stores the update g of application id as a pending
// change when it widens the application's grants (widensGrants) and the
// tenant's policy holds that to approval (nil otherwise).
func (v *Vault) updateNeedsApproval(t *txn, p *principal, id string, g access.Grant, fe unit.FieldErrors) (*ApprovalRequired, error) {
	pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
	if err != nil || !pol.Needs(approvals.OpWidenGrants) {
		return nil, err
	}
	rec, err := access.MustApplication(t.Tx, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if !rec.WidenedBy(g) {
		return nil, nil
	}
	access.ValidateGrants(rec.Type, g.Permissions, g.Rules, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if rec.Type == access.Management && !p.Covers(g.Permissions) {
		return nil, unit.Errorf(unit.PermissionDenied, "a management application can only be given permissions the caller holds")
	}
	before := applicationOf(rec)
	b, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	after := *before
	after.Name, after.Permissions, after.Rules = g.Name, g.Permissions, g.Rules
	if g.AllowedOrigins != nil {
		after.AllowedOrigins = *g.AllowedOrigins
	}
	if g.RevealBudget != nil {
		after.RevealBudget = g.RevealBudget
		if g.RevealBudget.Tokens == 0 {
			after.RevealBudget = nil
		}
	}
	return v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpWidenGrants, Target: id}, before, &after,
		changePayload{Name: g.Name, Permissions: g.Permissions, Rules: g.Rules, AllowedOrigins: g.AllowedOrigins,
			RevealBudget: g.RevealBudget, Before: b})
}

// keyView is what a change of key shows: never a key.
type keyView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

// regenerateNeedsApproval stores the regeneration of application id's key
// as a pending change when the tenant's policy holds it to approval (nil
// otherwise).
func (v *Vault) regenerateNeedsApproval(t *txn, p *principal, id, apiKey string) (*ApprovalRequired, error) {
	pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
	if err != nil || !pol.Needs(approvals.OpRegenerateKey) {
		return nil, err
	}
	rec, err := access.MustApplication(t.Tx, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if rec.Type == access.Management && !p.Covers(rec.Permissions) {
		return nil, unit.Errorf(unit.PermissionDenied, "the key of a management application can only be regenerated by a key holding all its permissions")
	}
	return v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpRegenerateKey, Target: id},
		keyView{ID: id, Name: rec.Name, Key: "current key"}, keyView{ID: id, Name: rec.Name, Key: "new key, shown to the requester only"},
		changePayload{Key: apiKey})
}
