// Package tenants_test holds the behaviour tests of tenants, members and
// invitations, through a Vault's public methods (internal/vaulttest). They sit
// in a directory of their own, beside internal/tenants, whose unit tests are
// in package tenants: a directory holding both would compile the root and
// every package between it and internal/tenants a second time for its test
// binary.
package tenants_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
