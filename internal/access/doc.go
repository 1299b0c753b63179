// Package access is the feature of applications and their keys. It
// holds, so far, their stored records: an application (ApplicationRecord)
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
// The rest of the feature (validating grants, authenticating keys,
// evaluating rules, the application methods) is still in the root
// package and moves here next; this package never imports the root.
package access
