// Package tenants is the feature of tenants, their members and their
// invitations: their stored records and the mechanism below the Vault's
// methods. The root keeps those methods (each authenticates, authorizes,
// and calls this package), its public types (User, TenantMember and
// Invitation are this package's, aliased) and the e-mail of invitations.
//
// # What it owns
//
//   - The stored records: a tenant (Record), a member (MemberRecord), an
//     invitation (InvitationRecord, with Expired) and the marker of a
//     tenant being deleted (DeletionState, plain, not sealed), each in its
//     own encoding and with its format's history in its doc (golden
//     fixtures in the root's testdata/records pin every version's bytes).
//   - Validation (validate.go): tenant and application names
//     (ValidateName), users (ValidateUser), bare e-mail addresses
//     (unit.ValidateEmail), and the roles (RoleOwner, RoleAdmin). The messages
//     are the API's: tests compare them.
//   - Members (member.go): Members and MemberWith, the scan that is the
//     index of a tenant's few members; the member the API shows (Member,
//     MemberOf, MemberRecordOf) and its event (EmitMember); removing one
//     (DeleteMember: never the OWNER), with its event and audit line.
//   - Invitations (invitation.go): link tokens (NewToken) stored only as a
//     keyed hash (LinkHash) in the record and as the key of the link's
//     lookup, their Lifetime and the expiry of a resend (ResentExpiry),
//     and writing and dropping an invitation with its lookup and expiry
//     entry (PutInvitation, DropLinks); the invitation the API shows
//     (Invitation, At, InvitationOf, InvitationRecordOf) and its events
//     (EmitInvitation); saving, resending, deleting and accepting one
//     with their events and audit lines (invitation_api.go:
//     SaveInvitation, ResendInvitation, DeleteInvitation, Accept, whose
//     every unusable link is one answer, ErrLink).
//   - Tenants (tenant.go): creating one with its keyring (NewKeyring),
//     registry entry, OWNER member and first management application
//     (Create, through access.Applications), with their audit lines and
//     events; reading (Get, GetRegistered: only a registered tenant),
//     whether there is any (Any) and pages of the registry (List).
//   - Lists and lookups (lists.go, invitation_new.go): pages of members
//     and invitations (ListMembers, ListInvitations), a user's membership
//     (Membership, FindMember), and the refusal of an invitation to an
//     address that is a member's or invited already (CheckInvite).
//   - The deletion of a tenant (deletion.go): its first transaction
//     (MarkDeleting: the marker, the final checkpoint its caller signs,
//     the registry entry, keyring and re-seal marker removed, the auth
//     cache voided), the deletions under way (Unfinished), its resumable passes
//     (DeletePass), each one transaction of at most DeleteBatch keys
//     recording its progress in the marker, phase by phase.
//   - The count of tenants (count.go): Count and EnsureCount (at Open) for
//     a store written before the count existed, Registered for the
//     commits that change it.
//
// # What it does not do
//
// It authorizes nothing: every function takes a *unit.Tx its caller has
// authorized. Tenants', members' and invitations' changes write their own
// audit lines and events. It does not sign the final audit checkpoint
// of a deletion (its caller passes that in), send mail, or know the
// Vault's clock other than through the Tx. It never imports the root.
package tenants
