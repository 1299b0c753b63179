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
// against a reference. A tenant keeps a full manager (IsFullManager);
// releases that add management permissions give them to the full
// managers of before (ManagementUpgrades, NeedsUpgrade).
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
// # Authentication cache
//
// AuthCache keeps recently authenticated keys' principals by their keyed
// hash, each under the generation it was read in and until its key's
// expiry, least recently used first out. It does not know which
// generation a transaction may use: the root decides that per
// transaction (its own counter on a store one process holds, the store's
// on a shared one), and the cache serves only entries of that generation.
//
// # What it does not do
//
// It authenticates no key: resolving a key to a principal (reading its
// lookup entry, its application or session, the tenant's state) is the
// root's, and so are, for now, the application methods (creating,
// updating, regenerating a key, deleting, with their events), which
// authorize and then call this package. This package never imports the
// root.
package access
