package tokenvault

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Invitation statuses.
const (
	InvitationPending = tenants.InvitationPending
	InvitationExpired = tenants.InvitationExpired
)

// InvitationLifetime is how long an invitation link works after creation,
// and how much each resend extends it.
const InvitationLifetime = tenants.Lifetime

// Invitation invites an e-mail address to become an ADMIN member of a
// tenant.
type Invitation = tenants.Invitation

// CreateInvitationRequest is the body of CreateInvitation.
type CreateInvitationRequest struct {
	Email string `json:"email"`
}

// InvitationMail is the e-mail a Mailer sends for a new or resent
// invitation. Token is the secret of the acceptance link: whoever holds it
// can join the tenant until ExpiresAt, so a Mailer must send it only to To
// and never log it.
type InvitationMail struct {
	To           string
	TenantID     string
	TenantName   string
	InvitationID string
	Token        string
	// AcceptURL is Options.InvitationURL with token=Token added, or empty
	// when no InvitationURL is configured.
	AcceptURL string
	ExpiresAt time.Time
}

// Mailer delivers invitation e-mails. The Vault calls it before it saves
// the invitation: when it fails, nothing is saved and the caller gets
// Unavailable, and a link whose invitation failed to save never works.
type Mailer interface {
	SendInvitation(ctx context.Context, m InvitationMail) error
}

// validateEmail accepts a bare RFC 5322 address: "ada@example.com", not
// "Ada <ada@example.com>".
func validateEmail(path, email string, fe unit.FieldErrors) { unit.ValidateEmail(path, email, fe) }

func (t *txn) inviteMAC(token string) []byte { return tenants.LinkHash(t.v.sys, token) }

// CreateInvitation invites req.Email to the caller's tenant: it e-mails an
// acceptance link through the Mailer and saves a PENDING invitation that
// expires InvitationLifetime later. Inviting an address that is already a
// member's, or that has an invitation (pending or expired: resend that
// one), is a Conflict. Requires tenant:invitation:create.
//
// Returns Invalid, Unauthenticated, PermissionDenied, Conflict, and
// Unavailable when the e-mail cannot be sent (nothing is saved).
func (v *Vault) CreateInvitation(ctx context.Context, key Credential, req CreateInvitationRequest) (*Invitation, error) {
	fe := unit.FieldErrors{}
	validateEmail("email", req.Email, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	token := tenants.NewToken()
	var rec *tenants.InvitationRecord
	var tenant Tenant
	check := func(t *txn) (*principal, error) {
		p, err := t.authorize(key, PermTenantInvitationCreate)
		if err != nil {
			return nil, err
		}
		if err := tenants.CheckInvite(t.Tx, p.TenantID, req.Email); err != nil {
			return nil, err
		}
		return p, nil
	}
	// Check and prepare, send, then save after checking again: the e-mail
	// goes out only for an invitation that can be saved, and a failed
	// e-mail saves nothing.
	err := v.view(ctx, func(t *txn) error {
		p, err := check(t)
		if err != nil {
			return err
		}
		trec, err := tenants.Named(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		tenant = tenantOf(trec)
		rec = tenants.InvitationRecordOf(&Invitation{
			ID:        t.v.ids.Next(t.Now),
			TenantID:  p.TenantID,
			Email:     req.Email,
			Status:    InvitationPending,
			ExpiresAt: t.Now.Add(InvitationLifetime),
			CreatedBy: p.ActorID,
			CreatedAt: t.Now,
		}, nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := v.sendInvitation(ctx, &tenant, ptr(tenants.InvitationOf(rec)), token); err != nil {
		return nil, err
	}
	err = v.update(ctx, func(t *txn) error {
		p, err := check(t)
		if err != nil {
			return err
		}
		rec := *rec
		rec.TokenHash = t.inviteMAC(token)
		return tenants.SaveInvitation(t.Tx, p.Actor(), &rec)
	})
	if err != nil {
		return nil, err
	}
	return ptr(tenants.InvitationOf(rec)), nil
}

// sendInvitation e-mails the link of inv.
func (v *Vault) sendInvitation(ctx context.Context, tenant *Tenant, inv *Invitation, token string) error {
	if v.mailer == nil {
		return unit.Errorf(Unavailable, "no Mailer is configured, so invitations cannot be sent")
	}
	m := InvitationMail{
		To:           inv.Email,
		TenantID:     tenant.ID,
		TenantName:   tenant.Name,
		InvitationID: inv.ID,
		Token:        token,
		ExpiresAt:    inv.ExpiresAt,
	}
	if v.inviteURL != "" {
		u, _ := url.Parse(v.inviteURL) // checked by Open
		q := u.Query()
		q.Set("token", token)
		u.RawQuery = q.Encode()
		m.AcceptURL = u.String()
	}
	if err := v.mailer.SendInvitation(ctx, m); err != nil {
		// The Mailer's error may quote the message; log only that it failed.
		v.logger.Error("tokenvault: invitation e-mail failed", "invitation", inv.ID, "err_type", fmt.Sprintf("%T", err))
		return unit.Errorf(Unavailable, "the invitation e-mail could not be sent; nothing was saved")
	}
	return nil
}

// ListInvitationsRequest pages ListInvitations.
type ListInvitationsRequest struct {
	PageRequest
}

// ListInvitations returns the invitations of the caller's tenant, oldest
// first, at most MaxPageSize a page. Requires tenant:invitation:read. List
// reads are not logged.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without tenant:invitation:read, or
// Internal.
func (v *Vault) ListInvitations(ctx context.Context, key Credential, req ListInvitationsRequest) (*Page[Invitation], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[Invitation]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantInvitationRead)
		if err != nil {
			return err
		}
		out, err = tenants.ListInvitations(t.Tx, p.TenantID, pg)
		return err
	})
	return out, err
}

// GetInvitation returns an invitation of the caller's tenant. Requires
// tenant:invitation:read.
//
// Returns NotFound for an invitation that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without tenant:invitation:read, or
// Internal.
func (v *Vault) GetInvitation(ctx context.Context, key Credential, id string) (*Invitation, error) {
	var out Invitation
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantInvitationRead)
		if err != nil {
			return err
		}
		rec, err := tenants.MustInvitation(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = tenants.InvitationOf(rec).At(t.Now)
		return t.logRead(p, EntityTenantInvitation, id, "Invitation read")
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteInvitation deletes an invitation; its outstanding link stops
// working. Requires tenant:invitation:delete.
//
// Returns NotFound for an invitation that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without tenant:invitation:delete,
// StorageFull, or Internal.
func (v *Vault) DeleteInvitation(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantInvitationDelete)
		if err != nil {
			return err
		}
		return tenants.DeleteInvitation(t.Tx, p.Actor(), p.TenantID, id)
	})
}

// ResendInvitation e-mails a new link for a PENDING or EXPIRED invitation
// and makes it PENDING again: earlier links stop working, and expires_at
// moves InvitationLifetime later (counted from the old expiry, or from now
// if that has passed, so a resent invitation always has a full 72 hours at
// least). The spec lists both tenant:invitation:create and
// tenant:invitation:update for this operation; both are required.
//
// Returns NotFound, Unauthenticated, PermissionDenied, and Unavailable when
// the e-mail cannot be sent (nothing is changed).
func (v *Vault) ResendInvitation(ctx context.Context, key Credential, id string) (*Invitation, error) {
	token := tenants.NewToken()
	load := func(t *txn) (*principal, *tenants.InvitationRecord, error) {
		p, err := t.authorize(key, PermTenantInvitationCreate)
		if err != nil {
			return nil, nil, err
		}
		if !p.Has(PermTenantInvitationUpdate) {
			return nil, nil, unit.Forbidden(PermTenantInvitationUpdate)
		}
		rec, err := tenants.MustInvitation(t.Tx, p.TenantID, id)
		return p, rec, err
	}
	var next Invitation
	var tenant Tenant
	err := v.view(ctx, func(t *txn) error {
		p, rec, err := load(t)
		if err != nil {
			return err
		}
		trec, err := tenants.Named(t.Tx, p.TenantID)
		if err != nil {
			return err
		}
		tenant = tenantOf(trec)
		now := t.Now
		next = tenants.InvitationOf(rec)
		next.Status = InvitationPending
		next.ExpiresAt = tenants.ResentExpiry(rec.ExpiresAt, now)
		next.ModifiedBy, next.ModifiedAt = p.ActorID, &now
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := v.sendInvitation(ctx, &tenant, &next, token); err != nil {
		return nil, err
	}
	err = v.update(ctx, func(t *txn) error {
		p, rec, err := load(t)
		if err != nil {
			return err
		}
		return tenants.ResendInvitation(t.Tx, p.Actor(), rec, tenants.InvitationRecordOf(&next, t.inviteMAC(token)))
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// AcceptInvitation makes user an ADMIN member of the tenant the invitation
// link token belongs to, and removes the invitation, so the link works
// once. It takes no key: the token is the credential, and the host program
// is responsible for having signed user in. user.ID, when empty, is
// assigned; user.Email, when empty, is the invited address.
//
// Returns NotFound for an unknown, used or replaced link and for an expired
// invitation (with a message saying so), Invalid for a bad user, Conflict
// when the user is a member already or a member has the user's e-mail
// address (case aside).
func (v *Vault) AcceptInvitation(ctx context.Context, token string, user User) (*TenantMember, error) {
	fe := unit.FieldErrors{}
	if user.ID != "" && !unit.ValidID(user.ID) {
		fe.Add("user.id", "must be a UUID")
	}
	validateUser("user", user, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if token == "" || len(token) > maxKeyLength {
		return nil, tenants.ErrLink
	}
	now := v.now()
	if user.ID == "" {
		user.ID = v.ids.Next(now)
	}
	mid := v.ids.Next(now)
	var out *TenantMember
	err := v.update(ctx, func(t *txn) error {
		var err error
		out, err = tenants.Accept(t.Tx, t.inviteMAC(token), user, mid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
