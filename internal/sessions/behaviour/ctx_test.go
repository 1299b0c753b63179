// Package sessions_test holds the behaviour tests of sessions, through a
// Vault's public methods (internal/vaulttest). They sit in a directory of
// their own, beside internal/sessions, whose unit tests are in package
// sessions: a directory holding both would compile the root and every package
// between it and internal/sessions a second time for its test binary.
package sessions_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
