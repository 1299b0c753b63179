// Package intents is the feature of token intents: validated data a
// public application collects, held briefly until a private one converts
// it into a token.
//
// # What it owns
//
//   - the intent's stored record (Record, with its format in its doc;
//     golden fixtures in the root's testdata/records pin its bytes) and
//     what a record says of itself (Expired, IndexKeys);
//   - its public shapes (Request, Intent, CardDetails, the root's
//     TokenIntentRequest, TokenIntent and CardDetails by alias), the card
//     summary an intent shows (CardBrand, the BIN and last four PCI DSS
//     allows) and its lifetimes (DefaultLifetime, MaxLifetime);
//   - the operations, each in the caller's unit of work: creating under
//     the caps (Service.Create, limits.go), finding a live intent a key
//     may use (Own, Live, Get), deleting (Delete), converting (Convert,
//     CheckExpressions), with their audit lines and events.
//
// # What it guarantees
//
// An intent never returns its data: a card's summary, and the
// fingerprint only to a key that reads such tokens in clear
// (MaySeeFingerprint). Every id that cannot be used, whatever the reason,
// is one answer (ErrNotFound), so ids cannot be probed. A caller only
// ever evicts its own intents (limits.go). A conversion reads and removes
// the intent in the transaction that makes the token, so an intent
// converts once.
//
// # What it does not do
//
// It authenticates no key: the Vault's methods (the root's intents.go)
// do, and hand it the principal. It does not validate data or make
// tokens: the token core validates an intent's data as a token's before
// Create, and makes the token a conversion asks for in the function the
// caller passes to Convert. It never imports the root.
package intents
