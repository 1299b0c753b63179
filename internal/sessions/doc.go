// Package sessions is the feature of sessions: keys a public application
// creates for one user and a private one authorizes with grants. It
// holds, so far, their stored record (Record, with the grants' and
// ceiling's rules in access's encoding), its format's history in its doc
// (golden fixtures in the root's testdata/records pin every version's
// bytes), and what a record says of itself (Expired, PendingKeys).
//
// The rest of the feature (creating, authorizing and sweeping sessions,
// their limits) is still in the root package and moves here next; this
// package never imports the root.
package sessions
