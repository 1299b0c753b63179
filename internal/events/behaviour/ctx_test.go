// Package events_test holds the behaviour tests of webhooks, their deliveries
// and the events they carry, through a Vault's public methods
// (internal/vaulttest). They sit in a directory of their own, beside
// internal/events, whose unit tests are in package events: a directory holding
// both would compile the root and every package between it and internal/events
// a second time for its test binary.
package events_test

import "context"

// ctx is the context of the tests' calls to the Vault: they are never cancelled.
var ctx = context.Background()
