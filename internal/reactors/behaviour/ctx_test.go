// Package reactors_test holds the behaviour tests of reactors, proxies and the
// tenant code they run, through a Vault's public methods (internal/vaulttest).
// They sit in a directory of their own, beside internal/reactors, whose unit
// tests are in package reactors: a directory holding both would compile the
// root and every package between it and internal/reactors a second time for
// its test binary.
package reactors_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
