// Package aliases_test holds the behaviour tests of aliases, their display
// rules and format-preserving encryption, through a Vault's public methods
// (internal/vaulttest). They sit in a directory of their own, beside
// internal/aliases, whose unit tests are in package aliases: a directory
// holding both would compile the root and every package between it and
// internal/aliases a second time for its test binary.
package aliases_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
