package tokenvault

import (
	"context"
	"fmt"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// AccessPreviewRequest asks what an application would be allowed to do
// with a sample token: either an existing application's grants
// (ApplicationID) or grants being written (Type, Permissions, Rules, as
// a CreateApplicationRequest holds them), never both.
type AccessPreviewRequest struct {
	ApplicationID string `json:"application_id,omitempty"`
	// Type is the type of the grants being written (private when empty).
	Type        ApplicationType `json:"type,omitempty"`
	Permissions []string        `json:"permissions,omitempty"`
	Rules       []AccessRule    `json:"rules,omitempty"`
	// Purpose is the purpose of access a call would name (empty: none).
	Purpose string             `json:"purpose,omitempty"`
	Token   AccessPreviewToken `json:"token"`
}

// AccessPreviewToken is the sample token: its type (token when empty)
// and its containers (the type's default container when empty, as a
// token request without containers gets).
type AccessPreviewToken struct {
	Type       string   `json:"type,omitempty"`
	Containers []string `json:"containers,omitempty"`
}

// AccessPreview answers an AccessPreviewRequest: the sample token as
// decided on (its containers filled in), and a decision per token
// permission, in the order of TokenPermissions.
type AccessPreview struct {
	Token     AccessPreviewToken `json:"token"`
	Purpose   string             `json:"purpose,omitempty"`
	Decisions []AccessDecision   `json:"decisions"`
}

// AccessDecision is the rule engine's decision on one permission: allowed
// with a transform, or refused (PurposeRequired when a purpose of a
// rule's list would have decided), with what decided in each container.
type AccessDecision struct {
	Permission      string            `json:"permission"`
	Allowed         bool              `json:"allowed"`
	Transform       string            `json:"transform,omitempty"`
	PurposeRequired bool              `json:"purpose_required,omitempty"`
	Containers      []AccessContainer `json:"containers"`
}

// AccessContainer is what decided a permission in one container: a rule
// (Rule, as the application holds it), a direct permission (Direct), or
// nothing (Reason says why it is refused).
type AccessContainer struct {
	Container string      `json:"container"`
	Allowed   bool        `json:"allowed"`
	Transform string      `json:"transform,omitempty"`
	Rule      *AccessRule `json:"rule,omitempty"`
	Direct    bool        `json:"direct,omitempty"`
	Reason    string      `json:"reason,omitempty"`
}

// TokenPermissions are the permissions on tokens, the ones access rules
// grant, in the order an AccessPreview answers them.
func TokenPermissions() []string {
	return []string{PermTokenCreate, PermTokenRead, PermTokenUpdate, PermTokenDelete, PermTokenSearch, PermTokenUse}
}

// PreviewAccess decides, for each token permission, what the grants of
// req would allow on its sample token, as the rule engine decides a real
// call (access.DecideFor): no token is read or written, so the answer
// says nothing of any token's data. Requires application:read. Grants
// written in the request are validated as CreateApplication validates
// them; an application's are its own. A preview of an application's
// grants is a read of the application in the audit log.
//
// Returns Invalid (with fields) for a bad request, NotFound for an
// application that is not the caller's tenant's, Unauthenticated for a
// key that is missing, unknown or expired, RateLimited over a rate
// limit, PermissionDenied without application:read, or Internal.
func (v *Vault) PreviewAccess(ctx context.Context, key Credential, req AccessPreviewRequest) (*AccessPreview, error) {
	fe := unit.FieldErrors{}
	tok := previewToken(req.Token, fe)
	if req.Purpose != "" && !access.ValidPurposeName(req.Purpose) {
		fe.Add("purpose", "must be a purpose name: lowercase letters, digits, - and _")
	}
	perms, rules := normalizeGrants(req.Permissions, req.Rules)
	if req.ApplicationID != "" {
		if req.Type != "" || len(req.Permissions) > 0 || len(req.Rules) > 0 {
			fe.Add("application_id", "give either application_id or type, permissions and rules, not both")
		}
	} else {
		typ := req.Type
		if typ == "" {
			typ = Private
		}
		if !validApplicationType(typ) {
			fe.Add("type", "must be private, public or management")
		} else {
			validateGrants(typ, perms, rules, fe)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *AccessPreview
	// Only a preview of an application reads a record (and logs the
	// read); one of grants being written runs in a read transaction.
	run := v.view
	if req.ApplicationID != "" {
		run = v.update
	}
	err := run(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermApplicationRead)
		if err != nil {
			return err
		}
		ps, rs := perms, rules
		if req.ApplicationID != "" {
			rec, err := access.MustApplication(t.Tx, p.TenantID, req.ApplicationID)
			if err != nil {
				return err
			}
			ps, rs = rec.Permissions, rec.Rules
		}
		out = previewOf(tok, req.Purpose, ps, sortedRules(rs))
		if req.ApplicationID != "" {
			return t.logRead(p, EntityApplication, req.ApplicationID, "Application access previewed")
		}
		return nil
	})
	return out, err
}

// previewToken checks the sample token of a preview, filling in its
// defaults.
func previewToken(tok AccessPreviewToken, fe unit.FieldErrors) AccessPreviewToken {
	out := AccessPreviewToken{Type: tok.Type, Containers: slices.Clone(tok.Containers)}
	if out.Type == "" {
		out.Type = unit.TypeToken
	}
	if !slices.Contains(tokens.Types, out.Type) {
		fe.Add("token.type", "must be token, card or bank")
		return out
	}
	if len(out.Containers) == 0 {
		out.Containers = []string{tokens.DefaultContainer[out.Type]}
	}
	if len(out.Containers) > maxPreviewContainers {
		fe.Add("token.containers", "must be at most %d containers", maxPreviewContainers)
	}
	for i, c := range out.Containers {
		if !access.ValidContainer(c) {
			fe.Add(fmt.Sprintf("token.containers[%d]", i), "must start and end with / and hold letters, digits, - and _ segments")
		}
	}
	return out
}

// maxPreviewContainers bounds a sample token's containers, as a token
// request's are bounded.
const maxPreviewContainers = 10

// previewOf is the preview of grants perms and rules (sorted) on tok.
func previewOf(tok AccessPreviewToken, purpose string, perms []string, rules []AccessRule) *AccessPreview {
	out := &AccessPreview{Token: tok, Purpose: purpose}
	for _, perm := range TokenPermissions() {
		e := access.Explain(perms, rules, perm, access.TokenScope{Containers: tok.Containers}, purpose)
		d := AccessDecision{Permission: perm, Allowed: e.OK, Transform: e.Transform, PurposeRequired: e.PurposeRequired}
		for _, c := range e.Containers {
			d.Containers = append(d.Containers, AccessContainer{Container: c.Container, Allowed: c.OK,
				Transform: c.Transform, Rule: c.Rule, Direct: c.Direct, Reason: c.Reason})
		}
		out.Decisions = append(out.Decisions, d)
	}
	return out
}
