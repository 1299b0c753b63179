// Package intents_test holds the behaviour tests of token intents, through a
// Vault's public methods (internal/vaulttest). They sit in a directory of
// their own, beside internal/intents, whose unit tests are in package intents:
// a directory holding both would compile the root and every package between it
// and internal/intents a second time for its test binary.
package intents_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
