// Package tenants is the feature of tenants, their members and their
// invitations. It holds, so far, their stored records: a tenant (Record),
// a member (MemberRecord), an invitation (InvitationRecord, with
// Expired) and the marker of a tenant being deleted (DeletionState,
// plain, not sealed), each in its own encoding and with its format's
// history in its doc (golden fixtures in the root's testdata/records pin
// every version's bytes).
//
// The rest of the feature (creating and deleting tenants, members,
// invitations and their mail) is still in the root package and moves
// here next; this package never imports the root.
package tenants
