// Package sessions is the feature of sessions: keys a public application
// creates for one user of a browser or mobile flow, which a private one
// authorizes with grants.
//
// # What it owns
//
//   - the session's stored record (Record, with the grants' and
//     ceiling's rules in access's encoding), its format's history in its
//     doc (golden fixtures in the root's testdata/records pin every
//     version's bytes), and what a record says of itself (Expired,
//     PendingKeys);
//   - the operations, each in the caller's unit of work: creating a
//     session waiting for authorization under the caps (Service.Create,
//     limits.go), authorizing it by its nonce (Service.Authorize),
//     authenticating its key (Service.Principal), deleting it (Delete),
//     with their audit lines and events; its lifetimes (Lifetime,
//     MaxLifetime).
//
// # What it guarantees
//
// A session's key and nonce are stored only as keyed MACs; a nonce works
// once, and every nonce that cannot be used is one answer. A session
// never does more than its authorizer could when it authorized it, nor
// than it can now, and stops working when the application that created
// it or the one that authorized it is gone or expired. A flood of
// creations from one address only replaces that address's own waiting
// sessions (limits.go).
//
// # What it does not do
//
// It authenticates no key and checks no application's type: the Vault's
// methods (the root's sessions.go) do, and charge the creation rate
// limit. It loads applications only through Service.Application. It never
// imports the root.
package sessions
