package tokenvault

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/url"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
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
type Invitation struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Email    string `json:"email"`
	// Status is PENDING, or EXPIRED from the instant ExpiresAt passes.
	Status     string     `json:"status"`
	ExpiresAt  time.Time  `json:"expires_at"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedBy string     `json:"modified_by,omitempty"`
	ModifiedAt *time.Time `json:"modified_at,omitempty"`
}

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

func (i *Invitation) expired(now time.Time) bool { return !now.Before(i.ExpiresAt) }

// at returns the invitation as seen at now: EXPIRED once its time has
// passed, even before the sweeper stores that.
func (i Invitation) at(now time.Time) Invitation {
	if i.expired(now) {
		i.Status = InvitationExpired
	}
	return i
}

// validateEmail accepts a bare RFC 5322 address: "ada@example.com", not
// "Ada <ada@example.com>".
func validateEmail(path, email string, fe unit.FieldErrors) { tenants.ValidateEmail(path, email, fe) }

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
		if m, err := t.memberWith(p.TenantID, "", req.Email); err != nil || m != nil {
			if err == nil {
				err = unit.Errorf(Conflict, "the address is already a member's")
			}
			return nil, err
		}
		if i, err := tenants.InvitationFor(t.Tx, p.TenantID, req.Email); err != nil || i != nil {
			if err == nil {
				err = unit.Errorf(Conflict, "the address has an invitation already (%s); resend it instead", i.ID)
			}
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
		var trec tenants.Record
		if _, err := t.GetRecord(barrier.Tenant(p.TenantID).Record(EntityTenant, p.TenantID), &trec); err != nil {
			return err
		}
		tenant = tenantOf(&trec)
		rec = invitationRecordOf(&Invitation{
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
	if err := v.sendInvitation(ctx, &tenant, ptr(invitationOf(rec)), token); err != nil {
		return nil, err
	}
	err = v.update(ctx, func(t *txn) error {
		p, err := check(t)
		if err != nil {
			return err
		}
		rec := *rec
		rec.TokenHash = t.inviteMAC(token)
		if err := tenants.PutInvitation(t.Tx, &rec); err != nil {
			return err
		}
		if err := t.emitInvitation(EventTenantInvitationCreated, p.Actor(), &rec); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityTenantInvitation, rec.ID, OpCreate, "Invitation created")
	})
	if err != nil {
		return nil, err
	}
	return ptr(invitationOf(rec)), nil
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
		out, err = paging.Records(t.Tx, p.TenantID, EntityTenantInvitation, pg, false, func(kv barrier.StoredValue) (*Invitation, error) {
			var rec tenants.InvitationRecord
			if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
				return nil, err
			}
			inv := invitationOf(&rec).at(t.Now)
			return &inv, nil
		})
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
		out = invitationOf(rec).at(t.Now)
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
		rec, err := tenants.MustInvitation(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		if err := tenants.DropLinks(t.Tx, rec); err != nil {
			return err
		}
		if err := t.Delete(barrier.Tenant(p.TenantID).Record(EntityTenantInvitation, id)); err != nil {
			return err
		}
		if err := t.emitInvitation(EventTenantInvitationDeleted, p.Actor(), rec); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityTenantInvitation, id, OpDelete, "Invitation deleted")
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
		var trec tenants.Record
		if _, err := t.GetRecord(barrier.Tenant(p.TenantID).Record(EntityTenant, p.TenantID), &trec); err != nil {
			return err
		}
		tenant = tenantOf(&trec)
		now := t.Now
		next = invitationOf(rec)
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
		if err := tenants.DropLinks(t.Tx, rec); err != nil {
			return err
		}
		resent := invitationRecordOf(&next, t.inviteMAC(token))
		if err := tenants.PutInvitation(t.Tx, resent); err != nil {
			return err
		}
		if err := t.emitInvitation(EventTenantInvitationResent, p.Actor(), resent); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityTenantInvitation, id, OpUpdate, "Invitation resent")
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// errInvitationLink answers every link that cannot be used: never issued,
// replaced by a resend, deleted, or accepted already.
var errInvitationLink = unit.Errorf(NotFound, "the invitation link is unknown or no longer valid")

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
		return nil, errInvitationLink
	}
	now := v.now()
	if user.ID == "" {
		user.ID = v.ids.Next(now)
	}
	mid := v.ids.Next(now)
	var out *TenantMember
	err := v.update(ctx, func(t *txn) error {
		mac := t.inviteMAC(token)
		var ref access.KeyRef
		ok, err := t.GetRecord(barrier.InviteLookup(mac), &ref)
		if err != nil {
			return err
		}
		if !ok || ref.Kind != EntityTenantInvitation {
			return errInvitationLink
		}
		if deleting, err := t.tenantDeleting(ref.TenantID); err != nil || deleting {
			if err == nil {
				err = errInvitationLink
			}
			return err
		}
		rec, err := tenants.MustInvitation(t.Tx, ref.TenantID, ref.ID)
		if err != nil {
			return errInvitationLink
		}
		if subtle.ConstantTimeCompare(rec.TokenHash, mac) != 1 {
			return errInvitationLink
		}
		unit.RecordTenant(ctx, rec.TenantID)
		if rec.Expired(t.Now) {
			return unit.Errorf(NotFound, "the invitation has expired; ask the tenant to resend it")
		}
		if user.Email == "" {
			user.Email = rec.Email
		}
		// By id or by address, as CreateInvitation refuses an address a
		// member has (case aside).
		if m, err := t.memberWith(rec.TenantID, user.ID, user.Email); err != nil || m != nil {
			if err == nil {
				err = unit.Errorf(Conflict, "the user is a member of the tenant already, or a member has this e-mail address")
			}
			return err
		}
		member := TenantMember{ID: mid, TenantID: rec.TenantID, Role: RoleAdmin, User: user, CreatedAt: t.Now}
		if err := t.PutRecord(barrier.Tenant(rec.TenantID).Record(EntityTenantMember, mid), memberRecordOf(&member)); err != nil {
			return err
		}
		if err := tenants.DropLinks(t.Tx, rec); err != nil {
			return err
		}
		if err := t.Delete(barrier.Tenant(rec.TenantID).Record(EntityTenantInvitation, rec.ID)); err != nil {
			return err
		}
		by := actor{ID: user.ID, Type: ActorUser}
		if err := t.Log(by, rec.TenantID, EntityTenantMember, mid, OpCreate, "Member joined by invitation"); err != nil {
			return err
		}
		if err := t.emitMember(EventTenantMemberCreated, by, &member); err != nil {
			return err
		}
		if err := t.emitInvitation(EventTenantInvitationAccepted, by, rec); err != nil {
			return err
		}
		out = &member
		return t.Log(by, rec.TenantID, EntityTenantInvitation, rec.ID, OpDelete, "Invitation accepted")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// invitationRecordOf is the record of the API's invitation inv, whose link
// token has the keyed hash tokenHash.
func invitationRecordOf(inv *Invitation, tokenHash []byte) *tenants.InvitationRecord {
	return &tenants.InvitationRecord{ID: inv.ID, TenantID: inv.TenantID, Email: inv.Email, Status: inv.Status,
		ExpiresAt: inv.ExpiresAt, CreatedBy: inv.CreatedBy, CreatedAt: inv.CreatedAt,
		ModifiedBy: inv.ModifiedBy, ModifiedAt: inv.ModifiedAt, TokenHash: tokenHash}
}

// invitationOf is the invitation as stored (see Invitation.at for how it is shown).
func invitationOf(r *tenants.InvitationRecord) Invitation {
	return Invitation{ID: r.ID, TenantID: r.TenantID, Email: r.Email, Status: r.Status, ExpiresAt: r.ExpiresAt,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
}
