package tokenvault_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never
// cancelled. The helpers the Vault's tests share are internal/vaulttest.
var ctx = context.Background()
