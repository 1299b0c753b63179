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
//     outcome and the webhook's health (disabling it, with its audit line
//     and a mail bounded per webhook and tenant), the attempt slots per
//     webhook and per tenant, and each tenant's cached subscriptions
//     (SubscriptionCache).
//   - The Service (made by the Vault's Open): the management of webhooks
//     (Create, Replace, Rotate, Delete, Get, List, and Check of a
//     request), of their deliveries (Deliveries, Redeliver, SendTest,
//     run under UpdatePending, which takes missing counts of pending
//     deliveries outside the write), the reading of a tenant's
//     subscriptions once per unit of work and from the cache
//     (Subscriptions, Forget, TenantWebhooks), and the writing of every
//     unit of work's events (Emit, the unit.EventWriter: targets, the
//     event's actor, the object's sequence counter, the envelope queued
//     in the outbox).
//   - The views of the objects events carry that are records of packages
//     below the root (an application's: ApplicationView, with
//     EmitApplication and EmitKeyRegenerated), and how every view is
//     kept within MaxViewBytes (FitView).
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
// (the root's webhooks.go) authorize the caller and call this package,
// which writes the audit lines of what it changes. What it needs of the
// rest of the Vault comes as functions, in the Service and the
// dispatcher's Config: the auth cache's generations (which the
// subscription cache shares), the Vault's rules for names, whether an
// address is a member's, the metrics. It builds the object of no event
// but an application's: the feature that owns an entity builds its view
// (unit.Event.View), which Emit calls only when a webhook subscribes.
package events
