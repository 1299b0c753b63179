// Package events is the events feature's own package: webhook
// subscriptions and the events a change emits to them (docs/webhooks.md,
// docs/webhooks-events.md).
//
// # What it owns
//
//   - The stored records: a subscription (Webhook) and one delivery of
//     one event to one webhook (Delivery), each in its own encoding with
//     its format's history in its doc (golden fixtures in the root's
//     testdata/records pin their bytes).
//   - The signing secrets' form (NewSecret), the statuses of a webhook
//     and of a delivery, and why the Vault disables a webhook.
//   - The event catalogue (Types, Lookup), the envelope POSTed to a
//     receiver (Event, Info, Actor) and its JSON (Body), and the rules of
//     who receives what (Subscribes) and which events end their object's
//     sequence (EndsObject).
//   - The checks of a subscription request (Validate).
//
// # What it guarantees
//
// Messages and stored bytes are those the Vault has always had: the
// root's tests compare both. The package never imports the root (the
// root's TestPackagesAreLayered enforces it): what it needs of the Vault
// it takes as arguments.
//
// # What it does not do
//
// It authorizes nothing and writes no audit line: the Vault's methods
// (the root's webhooks*.go) authorize the caller, call this package, and
// write the line. The outbox and the dispatcher are still the root's and
// move here next.
package events
