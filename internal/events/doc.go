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
//   - The checks of a subscription request (Validate), and the options
//     that bound and time delivery (Options, with their defaults).
//   - The outbox (outbox.go): the deliveries a change queues in its own
//     unit of work, their queue and pending index entries, and the
//     dispatcher woken once it commits (a unit.Tx hook, never a call from
//     the commit).
//   - The caps on pending deliveries (pending.go): each instance's counts
//     (PendingCounts), changed by what its commits queue and finish
//     (unit.Local hooks), taken again outside the write transactions.
//   - The dispatcher (Dispatcher, made from a Config by the Vault's Open,
//     run by Run until the Vault closes): its loop and passes over the
//     delivery queue (ParseDue), the claims (NewClaim) under which an
//     instance attempts a delivery, one attempt (Send: the envelope,
//     signed, POSTed under the outbound policy), the recording of its
//     outcome and the webhook's health (disabling it, with a mail bounded
//     per webhook and tenant), the attempt slots per webhook and per
//     tenant, and each tenant's cached subscriptions (SubscriptionCache).
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
// It authorizes nothing and decides no permission: the Vault's methods
// (the root's webhooks*.go) authorize the caller, call this package, and
// write their audit lines. What the dispatcher needs of the rest of the
// Vault comes through its Config as functions: the subscription cache's
// generation, the audit line of a webhook it disabled, whether an
// address is a member's, the metrics. It builds no event's object: the
// root's emit does (webhooks_emit.go, webhooks_views.go), since the
// objects are the other features' records.
package events
