// Package listing_test holds the behaviour tests of token lists, search and
// the token access history, through a Vault's public methods
// (internal/vaulttest). They sit in a directory of their own, beside
// internal/tokens/listing, whose unit tests are in package listing: a
// directory holding both would compile the root and every package between it
// and internal/tokens/listing a second time for its test binary.
package listing_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
