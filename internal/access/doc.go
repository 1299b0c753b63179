// Package access is the feature of applications and their keys: what a
// key may do, and the mechanism that decides it.
//
// # Records
//
// It holds their stored records: an application (ApplicationRecord)
// and the key lookup entry a secret's keyed hash leads to (KeyRef), each
// in its own encoding and with its format's history in its doc (golden
// fixtures in the root's testdata/records pin every version's bytes),
// and the types those encodings hold that the API shows too: the access
// rule (Rule, Condition, AppendRules and ReadRules, shared by every
// record that holds rules), ApplicationType, and the grants a key holds
// (Grants: permissions and rules, as sessions store them). The root names
// the public ones by aliases (tokenvault.AccessRule = access.Rule), so
// nothing a user sees changed when they moved.
//
// # Permissions and rules
//
// The permission vocabulary (Perm*, Transform*, the condition attributes
// and operators) and which application types may hold each permission
// (PermissionsFor, Holders) are here, with the validation of the grants
// an application or a session is given (ValidateGrants,
// ValidateSessionGrants: field errors with the request's paths, defaults
// filled in). The rule engine (Decide, DecideWithin) is a pure function:
// grants and a token's id and containers in, a transform or a refusal
// out; TestDecide is its table and FuzzAccessRuleConditions checks it
// against a reference. Explain is DecideFor with its reasons (the rule
// that decided in each container, or why nothing did), for a preview of
// what grants allow; the fuzz target holds its decision equal to
// DecideFor's, as both take one walk (decidingRule). A tenant keeps a full manager (IsFullManager);
// releases that add management permissions give them to the full
// managers of before (ManagementUpgrades, NeedsUpgrade).
//
// # Purposes of access
//
// A rule may hold purposes (Rule.Purposes): it then applies only to
// calls naming one of them (DecideFor, DecideWithinFor), and a call on
// one token that only such a rule would allow, naming none, is Invalid
// naming the field purpose (Principal.DecideOne, ErrPurposeRequired).
// The Authenticator checks the purpose a call names (unit.PurposeOf)
// against its tenant's list (PurposeList: internal/tenants keeps it)
// and sets it on the call's own copy of the principal
// (Principal.WithPurpose), never on a cached one. Records that hold
// rules store their purposes under a flag (AppendRulePurposes), so a
// record without any is as it was (purpose.go).
//
// # Applications in the store
//
// In the caller's unit of work it reads an application as a key, a
// session or a reactor acts through it (LoadApplication, MustApplication:
// an expired one is none), refuses the change that would leave a tenant
// without a full manager (KeepsAManager, ErrLastManager), and applies
// the management upgrades a store has not had when the Vault opens
// (UpgradeManagers, with an audit line of the system per grant).
//
// # Authentication
//
// Authenticator (made by the Vault's Open) resolves a key to its
// principal in the caller's unit of work: the lookup entry its keyed MAC
// leads to, the application (AppPrincipal) or the session (SessionKeys,
// internal/sessions) it names, and whether its tenant is being deleted.
// Every failure is the same Unauthenticated error, counted by the rate
// limits (Limits: internal/ratelimit imports this package, so they come
// in as an interface), and a key that authenticates is charged against
// them. AsApplication is how reactor and proxy code acts for an
// application named by id.
//
// AuthCache keeps recently authenticated keys' principals by their keyed
// hash, each under the generation it was read in and until its key's
// expiry, least recently used first out. Gens says which generation a
// transaction may serve and keep entries under (the cache's own counter
// on a store one process holds, the store's on a shared one), and
// AdvanceGeneration, a hook of every commit, moves the store's on when a
// transaction changed a key.
//
// # Changing applications
//
// Applications (made by Open) creates, replaces, regenerates the key of
// and deletes applications, in the caller's unit of work, after the
// caller checked the operation's permission: it refuses to give a
// management application permissions the caller lacks and to lose the
// tenant's last full manager, and writes the record, its key lookup, its
// expiry entry, its event (ApplicationEvents: internal/events imports
// this package, so events.Applications comes in as an interface) and its
// log line. ListApplications pages them.
//
// # The circuit breaker on reveals
//
// An application may hold a RevealBudget (validated with its grants) and
// be Frozen (breaker.go, and flags of its record's version 1). A frozen
// application's keys, the sessions it created or authorized (CheckUsable)
// and the code acting for it (AsApplication) are refused with
// ErrKeyFrozen; a principal carries its budget, counted against
// BudgetHolder by a RevealCounter, in the Vault's memory. Reporting a
// trip and freezing are the root's (its breaker.go): they need a
// transaction of their own after the read's.
//
// # What it does not do
//
// It checks no operation's permission (the root's methods do, through
// the principal), shows no application as the API does (the root's
// Application, without its key hash), and never imports the root.
package access
