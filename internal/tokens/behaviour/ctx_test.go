// Package tokens_test holds the behaviour tests of tokens: tokenize, reads,
// updates, fingerprints, CVC and their JSON, through a Vault's public methods
// (internal/vaulttest). They sit in a directory of their own, beside
// internal/tokens, whose unit tests are in package tokens: a directory holding
// both would compile the root and every package between it and internal/tokens
// a second time for its test binary.
package tokens_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
