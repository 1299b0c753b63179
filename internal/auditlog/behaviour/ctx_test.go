// Package auditlog_test holds the behaviour tests of the audit log: its pages,
// index, retention, chain, checkpoints and export, through a Vault's public
// methods (internal/vaulttest). They sit in a directory of their own, beside
// internal/auditlog, whose unit tests are in package auditlog: a directory
// holding both would compile the root and every package between it and
// internal/auditlog a second time for its test binary.
package auditlog_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
