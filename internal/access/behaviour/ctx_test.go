// Package access_test holds the behaviour tests of applications, keys, the
// auth cache and access rules, through a Vault's public methods
// (internal/vaulttest). They sit in a directory of their own, beside
// internal/access, whose unit tests are in package access: a directory holding
// both would compile the root and every package between it and internal/access
// a second time for its test binary.
package access_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
