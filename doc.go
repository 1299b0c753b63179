// Package tokenvault is an embeddable, multi-tenant data-tokenization
// service: sensitive values (card numbers, bank accounts, any JSON) go in,
// token ids come out, and the values are kept encrypted at rest and read
// back only through API keys and the access rules of their tenant.
//
// # The Vault
//
// A [Vault] has one method for every operation of the service. Every method
// that acts for a caller takes the caller's [Credential] (an application's
// API key or a session key) and checks the permission the operation needs,
// inside the same store transaction as the operation and its audit log
// line. The few methods without a credential ([Vault.CreateTenant],
// [Vault.ListTenants], [Vault.DeleteTenant], [Vault.Backup], the key
// rotations ([Vault.RotateAuditKey] among them), [Vault.SignAuditChain],
// [Vault.Sweep]) are the host's own; [Vault.AuditKeys] is public. A Vault is safe for
// concurrent use by multiple goroutines.
//
// # Opening a Vault
//
// [Open] takes [Options]: where the data lives (a bbolt file at Path, or
// any [store.Store]) and the root of trust that wraps the tenants' data
// keys (a 32-byte master key, or a [KeyWrapper] in an HSM or a KMS). Every
// other field's zero value is a documented default.
//
//	v, err := tokenvault.Open(ctx, tokenvault.Options{
//		Path: "vault.db",
//		Keys: tokenvault.KeyOptions{MasterKey: key},
//	})
//	if err != nil { ... }
//	defer v.Close()
//	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
//	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
//		Name: "backend", Type: tokenvault.Private,
//		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead},
//	})
//	tok, err := v.TokenizeCard(ctx, app.Key, tokenvault.Card{
//		Number: "4242424242424242", ExpirationMonth: 12, ExpirationYear: 2030,
//	})
//
// # Three ways to use it
//
//   - In process: call the [Vault] methods. [Vault.Tokenize] and
//     [Vault.Detokenize] take and give any JSON; [Vault.TokenizeCard],
//     [Vault.TokenizeValue], [TokenizeAs] and [DetokenizeAs] keep Go types.
//   - Over HTTP: package httpapi serves the Vault as the service's REST
//     interface (httpapi/openapi.yaml); cmd/tokenvault is a server around it.
//   - Remotely from Go: package client calls that HTTP interface with the
//     Vault's method names, arguments and result types.
//
// Each behaves the same: the same permissions, limits, errors and audit
// lines, whichever way a call arrives.
//
// # Errors
//
// Methods return *[Error], whose [Kind] says what went wrong (Invalid,
// Unauthenticated, PermissionDenied, NotFound, Conflict, RateLimited, ...;
// see [Kinds]) and whose Fields name the offending values; errors.Is(err,
// ErrNotFound) matches by kind, and each method's documentation names the
// kinds it returns. Another tenant's resource is NotFound, never
// PermissionDenied, so keys cannot probe for what exists. Package httpapi
// answers each kind with one HTTP status as application/problem+json.
//
// # How it is built
//
// This package is a facade: each method authenticates, authorizes and
// delegates to a feature's package under internal/ (tokens, aliases,
// intents, sessions, access, tenants, reactors, events, auditlog ...),
// which owns that feature's records and state. The features share
// internal/unit, the unit of work: a transaction over the encrypting
// barrier, the commit's hooks (a feature acts on a commit by what it
// registers there, never by being called from it), the line and event
// writers (a feature logs with Tx.Log and emits with Tx.Emit; the audit log
// and the events register themselves as the writers at Open), the error
// model ([Error] is unit.Error), ids and the records' encoding. Public types
// a feature defines are named here by aliases. docs/layout.md draws the
// packages and their layers.
//
// # Where the details live
//
// The repository's docs folder holds the reference:
//
//   - docs/api.md: every operation, its method and its HTTP route, and the
//     service's behaviour in detail (lists, tokens, sessions, idempotency).
//   - docs/internals.md: how the Vault works inside: storage and encryption,
//     the root of trust, tenant code and its sandbox, idempotency, rate
//     limits, pending sessions, what keys learn, card verification codes,
//     operator operations, tenant deletion, backups, metrics, audit export,
//     and the decisions where the specification is silent.
//   - docs/security.md: encryption at rest, what a key may learn, the master
//     key in an HSM or a KMS.
//   - docs/tenant-code.md: reactors, formulas, proxies and the sandbox.
//   - docs/webhooks.md: webhook subscriptions, their signing secrets, the
//     event envelope and catalogue (docs/webhooks-delivery.md,
//     docs/webhooks-events.md: delivery and what each event carries). An
//     acknowledged change has its events queued in its own commit, which
//     reads none of the tenant's webhooks (each Vault caches them); a
//     webhook change reaches every instance's next call once it returns.
//   - docs/operations.md: the server, its flags and data directory.
//   - docs/performance.md, docs/testing.md, docs/layout.md.
package tokenvault
